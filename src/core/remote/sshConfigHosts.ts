/**
 * The concrete host aliases of an ssh config file (`Host` lines), for a quick pick. Patterns
 * (`*`, `?`, `!negated`) are not hosts one can connect to and are left out; so are aliases the
 * runner would refuse. `Include`d files are not followed.
 */
export function sshConfigHosts(text: string): string[] {
  const hosts: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const match = /^Host(?:\s*=\s*|\s+)(.+)$/i.exec(line);
    if (!match) continue;
    for (const name of match[1]!.split(/\s+/)) {
      const alias = name.replace(/^"|"$/g, '');
      if (!alias || /[*?!]/.test(alias) || !/^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(alias)) continue;
      if (!hosts.includes(alias)) hosts.push(alias);
    }
  }
  return hosts;
}
