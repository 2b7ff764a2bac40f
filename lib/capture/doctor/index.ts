export * from './finding.js';
export { CaptureDoctor, diagnose, DOCTOR_CHECKS } from './doctor.js';
export { DoctorOptionError } from '../errors.js';
export {
  defaultDoctorOptions,
  resolveDoctorOptions,
  type DoctorOptions,
  type ResolvedDoctorOptions,
} from './options.js';
export { formatFindings } from './format.js';
