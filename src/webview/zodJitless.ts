// zod decides whether to compile object parsers with new Function when a schema is built (at
// import). The panel's CSP has no 'unsafe-eval', so that probe is refused and logged as a violation
// on every load. Imported first by main.ts, before any schema module, to switch the probe off.
import * as z from 'zod';

z.config({ jitless: true });
