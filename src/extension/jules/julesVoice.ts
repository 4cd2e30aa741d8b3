// Jules's voice: it refuses what its API cannot do (an edited plan, a teleport, no key set) before
// anything is sent, and those words are the whole message; a retry would only be refused again.
import { SessionsError } from '../../core/errors';
import { plainVoice, type BackendVoice } from '../sessions/sessionNotifier';

export const julesVoice: BackendVoice = {
  ...plainVoice,
  read: (err) =>
    err instanceof SessionsError && err.status === undefined && err.kind !== 'transient'
      ? { message: err.message, ownLogin: false, decisionNotDelivered: true }
      : plainVoice.read(err),
};
