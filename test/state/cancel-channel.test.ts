import { describe, expect, it } from 'vitest';
import { RedisCancelChannel } from '../../src/state/redis/cancel-channel.js';
import { sharedRedis } from './redis-test-utils.js';

describe('RedisCancelChannel (127.0.0.1:6379): cancel requests between instances', () => {
  const redis = sharedRedis();

  it('the instance that runs the response stops it and says so; the others stay silent', async () => {
    const prefix = `${redis.runPrefix}a:`;
    const asker = new RedisCancelChannel(redis.conn, { prefix });
    const runner = new RedisCancelChannel(redis.conn2, { prefix });
    await Promise.all([asker.ready(3000), runner.ready(3000)]);
    const asked: string[] = [];
    asker.serve(async (id) => (asked.push(`asker:${id}`), false));
    runner.serve(async (id) => (asked.push(`runner:${id}`), id === 'resp_running'));
    expect(await asker.request('resp_running')).toBe(true);
    expect(asked.sort()).toEqual(['asker:resp_running', 'runner:resp_running']);
    asker.close();
    runner.close();
  });

  it('nobody runs it: false once the wait is over; close ends a wait with false', async () => {
    const asker = new RedisCancelChannel(redis.conn, { prefix: `${redis.runPrefix}b:`, waitMs: 50 });
    await asker.ready(3000);
    expect(await asker.request('resp_gone')).toBe(false);
    const long = new RedisCancelChannel(redis.conn, { prefix: `${redis.runPrefix}c:`, waitMs: 60_000 });
    await long.ready(3000);
    const waiting = long.request('resp_gone');
    long.close();
    expect(await waiting).toBe(false);
    asker.close();
  });
});
