/**
 * Edit distance with adjacent transpositions (optimal string alignment), so that "prodcue" is one
 * edit from "produce", as a typist's slip is one mistake; plain Levenshtein would count two. Our
 * own few lines rather than a dependency: the inputs are command and flag names, a dozen letters.
 */
export function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  // Three rows are enough: the transposition looks back two rows.
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2]! + 1);
      row.push(d);
    }
    prev2 = prev;
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The candidate `input` most likely meant, or undefined when none is close: at most one edit for
 * words up to 4 letters, two for longer ones (so "--to" does not suggest "--topic"); failing that,
 * the only candidate that `input` (3 letters or more) is the start of ("--name" → "--namesrv").
 * Ties go to the first candidate in the list.
 */
export function didYouMean(input: string, candidates: readonly string[]): string | undefined {
  const word = input.toLowerCase();
  const limit = word.length <= 4 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const c of candidates) {
    const d = editDistance(word, c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  if (best !== undefined) return best;
  if (word.length < 3) return undefined;
  const prefixed = candidates.filter((c) => c.toLowerCase().startsWith(word));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}
