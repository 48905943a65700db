/** Why a remote operation failed, for the message and for what the user can do next. */
export type RemoteErrorKind =
  | 'invalid-host'
  | 'invalid-setting'
  | 'host-key'
  | 'auth'
  | 'unreachable'
  | 'ssh-failed'
  | 'no-python'
  | 'old-python'
  | 'no-torch'
  | 'no-gpu'
  | 'no-setsid'
  | 'no-slurm'
  | 'disk'
  | 'connection-lost'
  | 'remote-failed'
  | 'local-failed';

/** A failure with a plain, actionable message (shown to the user as is) and its kind. */
export class RemoteError extends Error {
  constructor(
    readonly kind: RemoteErrorKind,
    message: string,
    /** What ssh or the remote command printed, for the log. */
    readonly detail = '',
  ) {
    super(message);
    this.name = 'RemoteError';
  }
}
