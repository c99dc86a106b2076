/**
 * Whether an email trigger's allowed_senders admit `sender` (the envelope sender): "*" admits any
 * sender but the null sender of bounces, "@example.com" a whole domain, anything else one address.
 * Compared case-insensitively (domains are; local parts nearly always are in practice).
 */
export function isSenderAllowed(allowed: readonly string[], sender: string): boolean {
  if (sender === "") return false;
  const address = sender.toLowerCase();
  const domain = address.slice(address.lastIndexOf("@"));
  return allowed.some((entry) => {
    const rule = entry.toLowerCase();
    return rule === "*" || rule === address || (rule.startsWith("@") && rule === domain);
  });
}
