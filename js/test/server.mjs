// A static file server with HTTP range requests (one range per request),
// ETags and If-Match, counting the bytes of file bodies it serves: the
// remote end of the Node and browser tests.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.json': 'application/json' };

/** Serve `roots` (URL prefix -> directory); resolves to {url, stats, close}. */
export function serve(roots, port = 0) {
  const stats = { bytes: 0, requests: 0, byFile: {} };
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    const prefix = Object.keys(roots).sort((a, b) => b.length - a.length).find((p) => u.pathname.startsWith(p));
    if (prefix === undefined) { res.writeHead(404).end(); return; }
    const rel = decodeURIComponent(u.pathname.slice(prefix.length));
    const file = path.join(roots[prefix], rel);
    if (!file.startsWith(path.resolve(roots[prefix])) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    const st = fs.statSync(file);
    const etag = `"${st.size}-${Math.floor(st.mtimeMs)}"`;
    const head = { 'Accept-Ranges': 'bytes', ETag: etag, 'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream', 'Cache-Control': 'no-store' };
    if (req.headers['if-match'] && req.headers['if-match'] !== etag) { res.writeHead(412, head).end(); return; }
    let start = 0, end = st.size - 1, status = 200;
    const range = req.headers.range && /^bytes=(\d+)-(\d*)$/.exec(req.headers.range);
    if (range) {
      start = Number(range[1]);
      end = range[2] === '' ? st.size - 1 : Math.min(Number(range[2]), st.size - 1);
      if (start > end) { res.writeHead(416, { ...head, 'Content-Range': `bytes */${st.size}` }).end(); return; }
      status = 206;
      head['Content-Range'] = `bytes ${start}-${end}/${st.size}`;
    }
    head['Content-Length'] = String(end - start + 1);
    res.writeHead(status, head);
    if (req.method === 'HEAD') { res.end(); return; }
    stats.requests++;
    stats.bytes += end - start + 1;
    stats.byFile[rel] = (stats.byFile[rel] || 0) + end - start + 1;
    fs.createReadStream(file, { start, end }).pipe(res);
  });
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const url = `http://127.0.0.1:${server.address().port}`;
      resolve({ url, stats, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

// `node js/test/server.mjs DIR [PORT]`: serve DIR (for the viewer: js/) by hand.
if (import.meta.url === `file://${process.argv[1]}`) {
  serve({ '/': process.argv[2] || '.' }, Number(process.argv[3] || 8000)).then((s) => {
    console.log(`serving ${path.resolve(process.argv[2] || '.')} at ${s.url} (range requests)`);
  });
}
