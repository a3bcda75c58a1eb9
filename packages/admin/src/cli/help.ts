/** Help text of every command (`granary help <command>`, `granary <command> --help`). */
export const HELP: Record<string, string> = {
  main: `granary — operate a Granary cluster through a member's admin API

Usage: granary <command> [arguments] [flags]

Commands:
  members                      members, status, lease, activations, shards
  shards [--kind K]            each shard's owner and epoch; moving shards
  locate <kind> <id>           where a grain lives: shard, owner, epoch, activation
  grains [--kind K] [--top N] [--by calls|time]
                               activations per kind and member; the hottest grains
  pools                        cluster pools: workers per member, in flight, saturation
  call <kind> <id> <Method> --json '{...}' --proto <file>
                               call a generated grain with only its .proto
  reminders                    reminders and jobs per kind, loaded by their owners
  reminders list <kind> [<id>] [--limit N] [--after CURSOR]
                               a grain's reminders, or a kind's (N a page, default 1000)
  reminders remove <kind> <id> <name>
                               unregister a grain's reminder or job
  drain <member> [--no-wait]   graceful leave of a member (waits until it left)
  watch [--count N]            live tail: activations, deactivations, calls per second
  help [command]               this text, or a command's

Flags (every command):
  --url URL        admin API (the member's ops server)   env GRANARY_ADMIN_URL, default http://127.0.0.1:9464
  --token TOKEN    admin token                            env GRANARY_ADMIN_TOKEN
  --json           print JSON instead of a table
  --timeout MS     request timeout (default 10000)
  -h, --help       help

Exit codes: 0 ok, 1 the call or action failed, 2 usage, 3 admin API unreachable,
4 token missing or refused, 5 not found, 6 some members did not answer.
`,
  members: `granary members [--json]

Every member of the topology as the asked member sees it, with what each says about itself:
status, incarnation, lease (valid or lost, and for how long), activations, shards held, uptime.
Members that do not answer within the deadline are marked "not answering" (exit code 6).
`,
  shards: `granary shards [--kind K] [--json]

Each shard of each kind (or of K): the member holding its claim, the claim's epoch, and the
desired owner when the shard is moving. A summary line per kind counts held and moving shards.
`,
  locate: `granary locate <kind> <id> [--json]

Where grain <kind>/<id> lives: its shard, the member holding that shard and the epoch, and its
activation there if it is active (activation id, mailbox depth, idle time).
`,
  grains: `granary grains [--kind K] [--top N] [--by calls|time] [--json]

Live activations per kind and member, and the N hottest grains (default 10) by calls or by busy
time since the admin API was enabled.
`,
  pools: `granary pools [--json]

Cluster pools (@granary/pool): workers on each member, messages in flight at them, and
saturation (the share of workers with work).
`,
  call: `granary call <kind> <id> <Method> --json '{...}' --proto <file> [--proto <file>...] [-I <dir>] [--idempotent]

Calls rpc <Method> of generated grain <kind>/<id> (the kind is the service's full name, e.g.
messages.Ponger). The request is built from --json with the .proto files only; the reply is
printed as JSON (64-bit integers as strings, bytes as base64). -I adds an import directory.
`,
  reminders: `granary reminders [--json]
granary reminders list <kind> <id> [--json]
granary reminders list <kind> [--limit N] [--after CURSOR] [--json]
granary reminders remove <kind> <id> <name> [--json]

Durable reminders and jobs (ClusterOptions.reminders). Without a subcommand: per kind, how many
the owners of its shards have loaded, and the next due. \`list <kind> <id>\`: the grain's stored
reminders and pending jobs (name, period or "job", first due, catch-up, last tick claimed), read
from the store. \`list <kind>\`: the kind's reminders as the owners of its shards have loaded
them, by grain then name, N a page (default and most 1000), with the shards they come from and,
when there are more, the command for the next page (--after the cursor printed; \`next\` in
JSON). A shard without an owner that answered is not listed (the store has no call that lists a
kind). \`remove <kind> <id> <name>\`: unregisters one; exit 5 when the grain has none of that name
(or no member hosts the kind), 1 when the member asked runs without reminders or the store
failed.
`,
  drain: `granary drain <member> [--no-wait]

Asks <member> to leave gracefully: it stops taking new activations, hands its shards over, and
leaves. Waits (with a progress line) until it is gone from the topology unless --no-wait.
`,
  watch: `granary watch [--count N] [--json]

A live tail of the cluster, one line per second: members, activations, activations and
deactivations per second, calls per second, p50/p99 turn time, errors and dead letters per
second. Stops after N lines, or on Ctrl-C.
`,
};
