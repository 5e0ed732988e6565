#!/usr/bin/env node
// chokidar with awaitWriteFinish, for scripts/peers/settle_compare.py: prints one JSON line per
// add/change event (which chokidar emits only once the file's size stayed unchanged for
// stabilityThreshold ms, polled every pollInterval ms), with chokidar's size for the file and
// a wall-clock timestamp; the comparison times each line itself as it reads it.
//
//   node chokidar_settle.js ROOT [STABILITY_MS=2000] [POLL_MS=100]
//
// Debian's node-chokidar installs under /usr/share/nodejs: run with NODE_PATH=/usr/share/nodejs.
'use strict';
const path = require('path');
const chokidar = require('chokidar');

const root = path.resolve(process.argv[2] || '.');
const stabilityThreshold = Number(process.argv[3] || 2000);
const pollInterval = Number(process.argv[4] || 100);

function emit(record) {
  process.stdout.write(JSON.stringify(record) + '\n');
}

const watcher = chokidar.watch(root, {
  ignoreInitial: true,
  awaitWriteFinish: { stabilityThreshold, pollInterval },
});
for (const kind of ['add', 'change']) {
  watcher.on(kind, (file, stats) => emit({
    kind, path: path.resolve(root, file), size: stats ? stats.size : null, time: Date.now() / 1000,
  }));
}
watcher.on('ready', () => emit({ kind: 'ready', path: root, version: require('chokidar/package.json').version }));
watcher.on('error', (error) => process.stderr.write(`chokidar error: ${error}\n`));
process.on('SIGTERM', () => watcher.close().then(() => process.exit(0)));
