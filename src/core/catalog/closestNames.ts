/** Suggestions for a name the catalog does not know: `resnet5` -> resnet50, `vit_b16` -> vit_b_16 (the Hugging Face checkpoints rank their own way, with this edit distance). */

/** Edit distance (insertions, deletions, substitutions). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    }
    previous = current;
  }
  return previous[b.length]!;
}

const squash = (name: string) => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * Up to `limit` known names closest to `name`: spelling variants first (`efficientnetb0`,
 * `ResNet50`), then names that contain it or that it starts with, then small edit distances.
 */
export function closestNames(name: string, known: readonly string[], limit = 3): string[] {
  const wanted = squash(name);
  const scored = known.map((candidate) => {
    const squashed = squash(candidate);
    let score: number;
    if (squashed === wanted) score = 0;
    else if (wanted.length >= 3 && (squashed.startsWith(wanted) || wanted.startsWith(squashed))) score = 1 + Math.abs(squashed.length - wanted.length) / 100;
    else score = 2 + editDistance(wanted, squashed);
    return { candidate, score };
  });
  const exact = scored.filter((s) => s.score === 0);
  if (exact.length > 0) return exact.map((s) => s.candidate).slice(0, limit);
  const threshold = 2 + Math.max(2, Math.floor(wanted.length / 3));
  return scored
    .filter((s) => s.score <= threshold)
    .sort((a, b) => a.score - b.score || a.candidate.localeCompare(b.candidate))
    .slice(0, limit)
    .map((s) => s.candidate);
}

/** `unknown model "resnet5"; did you mean resnet50, resnet18?` or the plain message where nothing is close. */
export function unknownNameMessage(library: string, name: string, known: readonly string[]): string {
  const suggestions = closestNames(name, known);
  const hint = suggestions.length > 0 ? `; did you mean ${suggestions.join(', ')}?` : ` (it has ${known.length} models, such as ${known.slice(0, 4).join(', ')})`;
  return `the ${library} catalog has no model "${name}"${hint}`;
}
