// Preloaded (`node --import`) into the processes `npm start` runs (scripts/start.js). File descriptor 3 is
// a pipe whose other end only scripts/start.js holds. When it closes, scripts/start.js is gone, however it
// ended (even SIGKILL, which it cannot catch), and this process stops the way it stops on `kill`: it sends
// itself SIGTERM, so the gateway drains and the simulator saves its state file, instead of running on as an
// orphan that holds its port.
import { Socket } from 'node:net';

const LIFELINE_FD = 3;

let lifeline;
try {
  lifeline = new Socket({ fd: LIFELINE_FD, readable: true, writable: false });
} catch {
  // Started some other way (no pipe on fd 3): nothing to watch.
}
if (lifeline) {
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    process.kill(process.pid, 'SIGTERM');
  };
  lifeline.on('end', stop);
  lifeline.on('close', stop);
  lifeline.on('error', stop);
  lifeline.resume();
  // Watching must not keep the process alive on its own.
  lifeline.unref();
}
