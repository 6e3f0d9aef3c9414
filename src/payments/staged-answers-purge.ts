import type { FieldCipher } from '../crypto/field-cipher.js';
import { splitSensitive, type Question, type RegistrationAnswers } from '../registrations/answers.js';

/**
 * A checkout's staged payload (payload_enc) with its sensitive answers taken out, for the purge: the answers
 * split by the event's questions as they are now (the date of birth, and an id no question has any more,
 * count as sensitive), everything else (the contact the office follows a kept payment up with, the plain
 * answers) kept and encrypted again. A payload with no sensitive answer comes back as it was. One that cannot
 * be read (a key this server lacks, a broken value) cannot be purged selectively: null, gone whole.
 */
export function payloadWithoutSensitiveAnswers(cipher: FieldCipher, payloadEnc: string, questions: readonly Question[]): string | null {
  let staged: { answers?: RegistrationAnswers } & Record<string, unknown>;
  try {
    staged = JSON.parse(cipher.decrypt(payloadEnc)) as typeof staged;
  } catch {
    return null;
  }
  if (!staged.answers) return payloadEnc;
  const { plain, sensitive } = splitSensitive(questions, staged.answers);
  const hasSensitive = Object.keys(sensitive.registration).length > 0 || sensitive.attendees.some((answers) => Object.keys(answers).length > 0);
  if (!hasSensitive) return payloadEnc;
  return cipher.encrypt(JSON.stringify({ ...staged, answers: plain }));
}
