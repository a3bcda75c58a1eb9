// The attacker process of the attack suite: runs one attack (argv[2], JSON: { attack, target,
// victim, holdMs }) against a node and prints each answer the node gave as a JSON line
// `{ type: 'answer', kind, code, detail }`, then `{ type: 'done' }`, and exits.
import { ATTACKS, type AttackContext } from './attacks';

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '{}') as Omit<AttackContext, 'report'> & {
    attack: string;
  };
  const attack = ATTACKS[config.attack];
  if (!attack) throw new Error(`no attack '${config.attack}'`);
  const report: AttackContext['report'] = (a) =>
    process.stdout.write(`${JSON.stringify({ type: 'answer', ...a })}\n`);
  await attack({ ...config, report });
  process.stdout.write(`${JSON.stringify({ type: 'done' })}\n`);
  process.exit(0);
}

process.on('uncaughtException', (err) => {
  process.stdout.write(`${JSON.stringify({ type: 'crash', detail: String(err) })}\n`);
  process.exit(1);
});
void main();
