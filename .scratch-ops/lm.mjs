// usage: node lm.mjs <dir> <op> ...   ops: dbs | dump <db> [n] | put <db> <jsonkey> <jsonvalue> | del <db> <jsonkey> | meta
import { open } from 'lmdb';
const [dir, op, ...args] = process.argv.slice(2);
const root = open({ path: dir, compression: false, maxDbs: 64, noSubdir: false });
const db = (name) => root.openDB({ name, encoding: 'msgpack', useRecords: false });
const show = (v) => (v instanceof Uint8Array ? `<bin ${v.length}> ${Buffer.from(v).toString('utf8').slice(0, 200)}` : JSON.stringify(v)?.slice(0, 300));
if (op === 'dbs') { for (const k of root.getKeys({})) console.log(k); }
else if (op === 'dump') { let n = 0; for (const { key, value } of db(args[0]).getRange({})) { console.log(JSON.stringify(key), show(value)); if (++n >= Number(args[1] ?? 50)) break; } }
else if (op === 'keys') { for (const key of db(args[0]).getKeys({})) console.log(JSON.stringify(key)); }
else if (op === 'put') { await db(args[0]).put(JSON.parse(args[1]), JSON.parse(args[2])); console.log('put'); }
else if (op === 'del') { const ok = await db(args[0]).remove(JSON.parse(args[1])); console.log('del', ok); }
await root.close();
