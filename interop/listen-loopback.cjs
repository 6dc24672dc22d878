// Preloaded with `node -r ./listen-loopback.cjs` into servers that listen
// with no host (server-everything calls app.listen(PORT)), which means
// every interface: a listen without a host gets 127.0.0.1 instead, so a
// test's server is reachable on loopback only. Once listening, the bound
// address is printed on stderr ("listen-loopback: listening on
// 127.0.0.1:PORT"), which is how a test started with PORT=0 learns its port.
'use strict';
const net = require('node:net');

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first === undefined || typeof first === 'function') {
    args.unshift(0, '127.0.0.1');
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    if (typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  } else if (first && typeof first === 'object' && first.path === undefined && first.host === undefined && !first._handle && first.fd === undefined) {
    args[0] = { ...first, host: '127.0.0.1' };
  }
  this.once('listening', () => {
    const a = this.address();
    if (a && typeof a === 'object') process.stderr.write(`listen-loopback: listening on ${a.address}:${a.port}\n`);
  });
  return listen.apply(this, args);
};
