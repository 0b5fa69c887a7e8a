"""Helpers of the documentation site's tests: build it, serve it on localhost, and drive
Debian's headless Chromium over the DevTools protocol.

No browser package is needed: Chromium is started with ``--remote-debugging-pipe``, which
speaks the DevTools protocol (JSON messages, each ended by a NUL byte) on its file
descriptors 3 (commands in) and 4 (replies and events out).
"""
import base64
import fcntl
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MKDOCS_ENV = dict(os.environ, NO_MKDOCS_2_WARNING='1')  # mkdocs-material's notice, not ours


def build(site_dir, strict=True):
    """``mkdocs build [--strict]`` into ``site_dir``; returns the finished process (its
    output in ``stdout``, stderr folded in)."""
    cmd = [sys.executable, '-m', 'mkdocs', 'build', '-f', os.path.join(ROOT, 'mkdocs.yml'),
           '-d', str(site_dir)] + (['--strict'] if strict else [])
    return subprocess.run(cmd, cwd=ROOT, env=MKDOCS_ENV, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class Server:
    """The built site on ``http://127.0.0.1:PORT/`` in a thread (a context manager)."""

    def __init__(self, site_dir):
        handler = functools.partial(_QuietHandler, directory=str(site_dir))
        self.httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
        self.url = 'http://127.0.0.1:%d/' % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def chromium_path():
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """Headless Chromium, driven over ``--remote-debugging-pipe``: one page, its console
    errors, exceptions, failed loads and every URL it requested (a context manager)."""

    def __init__(self, profile_dir, width=1280, height=800, timeout=60):
        self.timeout, self.width, self.height = timeout, width, height
        self._next_id, self._buffer = 0, b''
        self.events = []
        # The DevTools pipe must be the child's fds 3 (commands in) and 4 (out). Both ends
        # are moved to fds >= 10 first, and bash (which, unlike dash, redirects fds above 9)
        # puts them in place before it execs Chromium (no preexec_fn: the test's server
        # thread is running).
        cmd_r, self._cmd_w = os.pipe()
        self._out_r, out_w = os.pipe()
        child_in = fcntl.fcntl(cmd_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_out = fcntl.fcntl(out_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(cmd_r)
        os.close(out_w)
        script = 'exec 3<&%d 4>&%d %d<&- %d>&-; exec "$@"' % (child_in, child_out, child_in,
                                                              child_out)
        self.proc = subprocess.Popen(
            [shutil.which('bash') or '/bin/bash', '-c', script, 'bash', chromium_path(),
             '--headless', '--no-sandbox',
             '--disable-gpu', '--disable-dev-shm-usage', '--remote-debugging-pipe',
             '--no-first-run', '--no-default-browser-check', '--disable-extensions',
             '--hide-scrollbars', '--user-data-dir=%s' % profile_dir,
             '--window-size=%d,%d' % (width, height), 'about:blank'],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(child_in, child_out))
        os.close(child_in)
        os.close(child_out)
        target = self.send('Target.createTarget', url='about:blank')['targetId']
        self.session = self.send('Target.attachToTarget', targetId=target,
                                 flatten=True)['sessionId']
        for domain in ('Page', 'Runtime', 'Log', 'Network'):
            self.send(domain + '.enable', session=True)
        self.send('Emulation.setDeviceMetricsOverride', session=True, width=width,
                  height=height, deviceScaleFactor=1, mobile=False)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.proc.poll() is None:
            try:
                self._write({'id': self._id(), 'method': 'Browser.close'})
                self.proc.wait(timeout=10)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        for fd in (self._cmd_w, self._out_r):
            try:
                os.close(fd)
            except OSError:
                pass

    # --- the protocol -------------------------------------------------------------------
    def _id(self):
        self._next_id += 1
        return self._next_id

    def _write(self, message):
        os.write(self._cmd_w, json.dumps(message).encode() + b'\0')

    def _read(self, deadline):
        while b'\0' not in self._buffer:
            if time.time() > deadline:
                raise TimeoutError('no answer from Chromium')
            chunk = os.read(self._out_r, 1 << 16)
            if not chunk:
                raise RuntimeError('Chromium closed its DevTools pipe (exit %s)'
                                   % self.proc.poll())
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b'\0', 1)
        return json.loads(message)

    def send(self, method, session=False, **params):
        """Send one command and return its result; events read meanwhile are kept."""
        message = {'id': self._id(), 'method': method, 'params': params}
        if session:
            message['sessionId'] = self.session
        self._write(message)
        deadline = time.time() + self.timeout
        while True:
            reply = self._read(deadline)
            if reply.get('id') == message['id']:
                if 'error' in reply:
                    raise RuntimeError('%s: %s' % (method, reply['error']))
                return reply.get('result', {})
            self.events.append(reply)

    def wait_event(self, method, deadline):
        for i, e in enumerate(self.events):
            if e.get('method') == method:
                return self.events.pop(i)
        while True:
            event = self._read(deadline)
            if event.get('method') == method:
                return event
            self.events.append(event)

    # --- what the tests use -------------------------------------------------------------
    def evaluate(self, expression):
        """The JSON value of a JavaScript expression in the page."""
        result = self.send('Runtime.evaluate', session=True, expression=expression,
                           returnByValue=True, awaitPromise=True)
        if 'exceptionDetails' in result:
            raise RuntimeError('%s: %s' % (expression, result['exceptionDetails']))
        return result['result'].get('value')

    def load(self, url, ready='true', settle=0.5):
        """Open ``url``, wait for its load event and then for ``ready`` (a JavaScript
        expression) to be true, and a little more for late console messages."""
        self.events.clear()
        deadline = time.time() + self.timeout
        self.send('Page.navigate', session=True, url=url)
        self.wait_event('Page.loadEventFired', deadline)
        while not self.evaluate(ready):
            if time.time() > deadline:
                raise TimeoutError('%s: never ready (%s)' % (url, ready))
            time.sleep(0.1)
        time.sleep(settle)
        self.send('Runtime.evaluate', session=True, expression='1')  # collect the events

    def errors(self):
        """The page's console errors, uncaught exceptions, error log entries and failed
        requests since the last ``load``, as text."""
        out = []
        for e in self.events:
            method, p = e.get('method'), e.get('params', {})
            if method == 'Runtime.consoleAPICalled' and p.get('type') in ('error', 'assert'):
                out.append('console.%s: %s' % (p['type'], ' '.join(
                    str(a.get('value', a.get('description', ''))) for a in p.get('args', []))))
            elif method == 'Runtime.exceptionThrown':
                out.append('exception: %s' % p['exceptionDetails'].get(
                    'exception', {}).get('description', p['exceptionDetails'].get('text')))
            elif method == 'Log.entryAdded' and p['entry'].get('level') == 'error':
                out.append('log: %s %s' % (p['entry'].get('text'), p['entry'].get('url', '')))
            elif method == 'Network.loadingFailed' and not p.get('canceled'):
                out.append('failed load: %s' % p.get('errorText'))
        return out

    def requested_urls(self):
        return [e['params']['request']['url'] for e in self.events
                if e.get('method') == 'Network.requestWillBeSent']

    def screenshot(self, path):
        data = self.send('Page.captureScreenshot', session=True, format='png')['data']
        with open(path, 'wb') as f:
            f.write(base64.b64decode(data))
