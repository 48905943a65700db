/**
 * The shell scripts run on the remote host. Each is constant text run as `sh -c SCRIPT sh ARGS...`:
 * every value (paths, the interpreter, the harness's arguments) arrives as a positional parameter,
 * never spliced into the script.
 */

const PYTHON_CHECK = [
  'import sys',
  'print("pythonVersion=%d.%d.%d" % sys.version_info[:3])',
  'try:',
  '    import torch',
  'except Exception as error:',
  '    print("torch=missing")',
  '    print("torchError=%s: %s" % (type(error).__name__, (str(error).splitlines() or [""])[0]))',
  'else:',
  '    print("torch=" + torch.__version__)',
  '    print("cudaAvailable=%s" % torch.cuda.is_available())',
].join('\n');

/** $1 python, $2 work directory. Prints key=value lines. */
export const PREFLIGHT = `py="$1"
echo "ssh=ok"
echo "path=$PATH"
if command -v "$py" >/dev/null 2>&1; then
  echo "python=$(command -v "$py")"
  "$py" -c "$3" 2>&1
else
  echo "python=missing"
fi
if command -v nvidia-smi >/dev/null 2>&1; then
  out=$(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1); code=$?
  echo "nvidiaSmiExit=$code"
  printf '%s\\n' "$out" | while IFS= read -r line; do [ -n "$line" ] && echo "gpu=$line"; done
else
  echo "nvidiaSmi=missing"
fi
command -v dcgmi >/dev/null 2>&1 && echo "dcgmi=present"
command -v setsid >/dev/null 2>&1 && echo "setsid=present"
command -v sbatch >/dev/null 2>&1 && echo "sbatch=present"
mkdir -p "$2" 2>/dev/null
echo "df=$(df -Pk "$2" 2>/dev/null | tail -n 1)"
`;

export function preflightArgs(python: string, workDir: string): string[] {
  return [python, workDir, PYTHON_CHECK];
}

/** $1 directory: creates it (and parents). */
export const MKDIR = 'mkdir -p "$1"';

/**
 * $1 run directory, $2 python, then the harness's arguments. Starts \`python -m harness ARGS\` in
 * its own session (setsid: a dropped connection or a closed terminal does not end it; its pid is
 * the process group's id, which cancel signals), stdout to stdout.jsonl, stderr to stderr.log, and
 * its exit code to \`exit\` when it ends.
 */
export const START = `set -e
cd "$1"
shift
py="$1"
shift
rm -f exit cancelled
touch stdout.jsonl stderr.log
nohup setsid sh -c '"$0" -m harness "$@" >>stdout.jsonl 2>>stderr.log </dev/null; echo $? >exit' "$py" "$@" >/dev/null 2>&1 </dev/null &
echo "$!" >pid
echo "pid=$!"
`;

export const POLL_STDOUT_MARKER = '--- gpu-estimator stdout';
export const POLL_STDERR_MARKER = '--- gpu-estimator stderr';

/**
 * $1 run directory, $2 byte offset into stdout.jsonl. Prints the job's state, then the new bytes of
 * stdout.jsonl after a marker line, then the last lines of stderr.log after another.
 */
export const POLL = `cd "$1" 2>/dev/null || { echo "state=missing"; exit 0; }
pid=$(cat pid 2>/dev/null || true)
if [ -f exit ]; then
  echo "state=exited"
  echo "exitCode=$(cat exit)"
elif [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
  echo "state=running"
else
  echo "state=dead"
fi
[ -f cancelled ] && echo "cancelled=1"
size=$(wc -c <stdout.jsonl 2>/dev/null || echo 0)
size=$((size + 0))
echo "size=$size"
echo "${POLL_STDOUT_MARKER}"
if [ "$size" -gt "$2" ]; then tail -c +$(($2 + 1)) stdout.jsonl | head -c $((size - $2)); fi
echo
echo "${POLL_STDERR_MARKER}"
tail -n 20 stderr.log 2>/dev/null || true
`;

/** $1 run directory. Marks the run cancelled and stops its whole process group (TERM, then KILL after 10 s). */
export const CANCEL = `cd "$1" 2>/dev/null || { echo "state=missing"; exit 0; }
touch cancelled
pid=$(cat pid 2>/dev/null || true)
[ -n "$pid" ] || { echo "state=never-started"; exit 0; }
alive() { kill -0 -"$pid" 2>/dev/null || kill -0 "$pid" 2>/dev/null; }
kill -TERM -"$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
i=0
while alive && [ "$i" -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
if alive; then kill -KILL -"$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; echo "killed=1"; fi
i=0
while alive && [ "$i" -lt 25 ]; do sleep 0.2; i=$((i + 1)); done
echo "state=stopped"
`;

/**
 * $1 run directory, then the names to fetch in it. Lists every entry under each name that exists
 * except folders, each tagged and NUL-terminated (a name may hold a newline): `f` a regular file,
 * `l` a symbolic link, `o` anything else (FIFO, socket, device). find follows no link, not even
 * one given as a name, so a linked folder is listed as one `l` entry. Exits 3 when the run
 * directory is gone.
 */
export const LIST_RESULTS = `cd "$1" || exit 3
shift
for f in "$@"; do
  if [ -e "$f" ] || [ -L "$f" ]; then
    find "$f" \\( -type f -exec printf 'f%s\\000' {} + \\) -o \\( -type l -exec printf 'l%s\\000' {} + \\) -o \\( ! -type d -exec printf 'o%s\\000' {} + \\)
  fi
done
exit 0
`;

/** key=value lines (first occurrence wins, repeated keys collected by `all`). */
export function keyValues(text: string): { get(key: string): string | undefined; all(key: string): string[] } {
  const pairs: [string, string][] = [];
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line.trimEnd());
    if (match) pairs.push([match[1]!, match[2]!]);
  }
  return {
    get: (key) => pairs.find(([k]) => k === key)?.[1],
    all: (key) => pairs.filter(([k]) => k === key).map(([, v]) => v),
  };
}
