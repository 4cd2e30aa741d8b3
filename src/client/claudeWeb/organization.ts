// The organization a remote session belongs to (docs/protocol.md section 9): Claude Code records it in
// its global config after login; the profile call answers when that file does not say.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { claudeConfigDir, type Env } from './credentials';

const GlobalConfigSchema = z.looseObject({
  oauthAccount: z
    .looseObject({ organizationUuid: z.string().min(1).optional() })
    .nullable()
    .optional(),
});

export const ProfileSchema = z.looseObject({
  account: z.looseObject({ uuid: z.string().optional(), email: z.string().optional() }).nullable().optional(),
  organization: z
    .looseObject({ uuid: z.string().min(1), name: z.string().nullable().optional() })
    .nullable()
    .optional(),
});
export type Profile = z.infer<typeof ProfileSchema>;

export interface OrganizationFileOptions {
  configDir?: string;
  env?: Env;
  homeDir?: string;
  log?: (line: string) => void;
}

/** Where Claude Code's global config may be, in the order we look. */
export function globalConfigPaths(options: OrganizationFileOptions = {}): string[] {
  const home = options.homeDir ?? homedir();
  const paths = [join(claudeConfigDir(options), '.claude.json'), join(home, '.claude.json')];
  return [...new Set(paths)];
}

/** oauthAccount.organizationUuid from the first config file that has one; undefined otherwise. */
export async function readOrganizationFromConfig(options: OrganizationFileOptions = {}): Promise<string | undefined> {
  const log = options.log ?? (() => {});
  for (const path of globalConfigPaths(options)) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch {
      continue; // absent or unreadable: the next place, then the profile call
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      log(`claude-web: ${path} is not valid JSON; asking the profile for the organization`);
      continue;
    }
    const parsed = GlobalConfigSchema.safeParse(json);
    const uuid = parsed.success ? parsed.data.oauthAccount?.organizationUuid : undefined;
    if (uuid) return uuid;
  }
  return undefined;
}
