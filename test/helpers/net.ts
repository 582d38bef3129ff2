/** Network helpers shared by the tests (not a test file itself). */
import net from 'node:net';

/** A port on 127.0.0.1 where nothing listens right now (bound on port 0, then released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
