// What the nouns of `wharf iam` share: their list, describe and delete verbs, the `--parent`
// filter, role names, update masks.
import type { Command } from "commander";
import { listAll } from "../../../../sdk/pages.js";
import type { CommandContext } from "../../context.js";
import { UsageError, type View } from "../../output.js";
import { type Bind, print } from "../../program.js";
import { groupUid } from "../../resolve.js";

export async function collectAll<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** The uidp filter of a list: under `--parent` (resolved), else everything the caller sees. */
export async function under(ctx: CommandContext, parent: string | undefined) {
  return typeof parent === "string" ? { descendantsOf: await groupUid(ctx.client, parent) } : undefined;
}

/** The uidp filter of {@link under}, if any. */
export type UidpFilter = Awaited<ReturnType<typeof under>>;

/** The value of option `name` (`--flag`), which this command needs although commander may not. */
export function requireOption<O extends object>(
  options: O,
  name: keyof O & string,
  flag: string = name,
): string {
  const value: unknown = options[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${flag} is required`);
  return value;
}

/** The update mask of the options given: each option's field path. A usage error when none is. */
export function mask<O extends object, K extends keyof O & string>(
  options: O,
  fields: Readonly<Partial<Record<K, string>>>,
): { paths: string[] } {
  const paths: string[] = [];
  for (const flag in fields) {
    const path = fields[flag];
    if (path !== undefined && options[flag] !== undefined) paths.push(path);
  }
  if (paths.length === 0)
    throw new UsageError(
      `nothing to update: give ${Object.keys(fields)
        .map((f) => `--${f}`)
        .join(", ")}`,
    );
  return { paths };
}

/** A role's uid: a uid as is, else the role of that name the caller can see. */
export async function roleUid(ctx: CommandContext, ref: string): Promise<string> {
  if (/^[0-9a-f]{40}(\/[0-9a-f]{16})*$/.test(ref)) return ref;
  for await (const role of listAll(ctx.client.iam.roles.listRoles, { name: ref })) return role.uid;
  throw new UsageError(`no role named "${ref}"`);
}

/** The `--parent` option of a list: an optional filter. */
export type ParentFilter = { parent?: string };

/**
 * `<noun> list`: an optional `--parent <group>` (described by `parent`), the noun's own `options`,
 * and every item `items` gives for the options and the `--parent` filter, printed with `view`.
 */
export function listVerb<T, O extends ParentFilter>(
  noun: Command,
  bind: Bind,
  spec: {
    description: string;
    parent: string;
    options?: (command: Command) => Command;
    view: View<T>;
    items: (ctx: CommandContext, options: O, uidp: UidpFilter) => AsyncIterable<T>;
  },
): void {
  const command = noun.command("list").description(spec.description).option("--parent <group>", spec.parent);
  (spec.options?.(command) ?? command).action(
    bind(async (ctx, _args, o: O) => {
      const uidp = await under(ctx, o.parent);
      print(ctx, await collectAll(spec.items(ctx, o, uidp)), spec.view);
    }),
  );
}

/** `<noun> describe <ref>` (`usage`): prints what `get` finds for the operand. */
export function describeVerb<T>(
  noun: Command,
  bind: Bind,
  usage: string,
  description: string,
  view: View<T>,
  get: (ctx: CommandContext, ref: string) => Promise<T>,
): void {
  noun
    .command(usage)
    .description(description)
    .action(bind(async (ctx, [ref]: [string]) => print(ctx, [await get(ctx, ref)], view, true)));
}

/**
 * `<noun> delete <ref>` (`usage`): `remove` deletes what the operand names and resolves to its uid
 * when it had to look one up (to anything else when the operand is the uid, e.g. the delete call's
 * answer); `deleted <what> <uid>` goes to stderr.
 */
export function deleteVerb(
  noun: Command,
  bind: Bind,
  usage: string,
  description: string,
  what: string,
  remove: (ctx: CommandContext, ref: string) => Promise<unknown>,
): void {
  noun
    .command(usage)
    .description(description)
    .action(
      bind(async (ctx, [ref]: [string]) => {
        const removed = await remove(ctx, ref);
        const uid = typeof removed === "string" ? removed : ref;
        ctx.stderr.write(`deleted ${what} ${uid}\n`);
      }),
    );
}
