#!/usr/bin/env node
// SPDX-License-Identifier: MIT
//
// Loads arena-certify HTML reports in headless Chromium and checks them:
//
//   node browser.js CASES.json
//
// CASES.json is a list of {name, page, screenshot, verdict, roles,
// info, zoom}: the report to load, where to save its screenshot, the
// verdict its header must show, the failing-object roles that must be
// drawn (an empty list: none may be), a text the details panel must show
// once the first failing object is clicked, and whether to zoom (drag
// across the chart, then pick the first failing object in the header).
// Every case fails on any console error, uncaught exception or failed
// load.  Prints one line per case and ends with "N passed, N failed".
//
// Chromium is driven through the DevTools protocol over a pipe
// (--remote-debugging-pipe: fd 3 in, fd 4 out, messages ending in NUL),
// so nothing but node's own modules is needed, and no port is opened.
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const WIDTH = 1400, HEIGHT = 1000;

class Browser {
  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arena-html-'));
    // The network flags matter: this machine refuses outside connections,
    // and without them Chromium's background fetches log errors.
    const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
      '--no-first-run', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--user-data-dir=' + this.dir, '--remote-debugging-pipe',
      '--hide-scrollbars', 'about:blank'];
    this.proc = spawn(process.env.CHROMIUM || 'chromium', args,
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
    this.stderr = '';
    this.proc.stderr.on('data', (d) => { this.stderr = (this.stderr + d).slice(-4000); });
    this.next = 0;
    this.waiting = new Map();
    this.listeners = [];
    let buf = Buffer.alloc(0);
    this.proc.stdio[4].on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      let end;
      while ((end = buf.indexOf(0)) >= 0) {
        const msg = JSON.parse(buf.subarray(0, end).toString('utf8'));
        buf = buf.subarray(end + 1);
        this.dispatch(msg);
      }
    });
    this.exited = new Promise((resolve) => this.proc.on('exit', resolve));
  }

  dispatch(msg) {
    if (msg.id !== undefined && this.waiting.has(msg.id)) {
      const { resolve, reject, method } = this.waiting.get(msg.id);
      this.waiting.delete(msg.id);
      if (msg.error) reject(new Error(method + ': ' + msg.error.message));
      else resolve(msg.result);
    } else if (msg.method) {
      this.listeners.forEach((f) => f(msg));
    }
  }

  send(method, params = {}, sessionId, timeoutMs = 30000) {
    const id = ++this.next;
    const msg = { id, method, params };
    if (sessionId) msg.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(method + ': no answer in ' + timeoutMs + ' ms'));
      }, timeoutMs);
      this.waiting.set(id, {
        method,
        resolve: (r) => { clearTimeout(timer); resolve(r); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      this.proc.stdio[3].write(JSON.stringify(msg) + '\0');
    });
  }

  async close() {
    try { await this.send('Browser.close', {}, undefined, 5000); } catch (e) { this.proc.kill(); }
    await this.exited;
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

// One tab, with everything it reports collected as problems.
async function openPage(browser) {
  const { targetId } = await browser.send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await browser.send('Target.attachToTarget', { targetId, flatten: true });
  const page = { sessionId, targetId, problems: [], loaded: null };
  browser.listeners.push((m) => {
    if (m.sessionId !== sessionId) return;
    const p = m.params;
    if (m.method === 'Runtime.exceptionThrown')
      page.problems.push('exception: ' + (p.exceptionDetails.exception
        ? p.exceptionDetails.exception.description : p.exceptionDetails.text));
    else if (m.method === 'Runtime.consoleAPICalled' && (p.type === 'error' || p.type === 'assert'))
      page.problems.push('console.' + p.type + ': ' + p.args.map((a) => a.value || a.description).join(' '));
    else if (m.method === 'Log.entryAdded' && p.entry.level === 'error')
      page.problems.push('log: ' + p.entry.text + (p.entry.url ? ' (' + p.entry.url + ')' : ''));
    else if (m.method === 'Page.loadEventFired' && page.loaded)
      page.loaded();
  });
  const send = (method, params) => browser.send(method, params, sessionId);
  page.send = send;
  await send('Runtime.enable');
  await send('Log.enable');
  await send('Page.enable');
  await send('Emulation.setDeviceMetricsOverride',
    { width: WIDTH, height: HEIGHT, deviceScaleFactor: 1, mobile: false });
  return page;
}

async function evaluate(page, expr) {
  const r = await page.send('Runtime.evaluate', { expression: expr, returnByValue: true, awaitPromise: true });
  if (r.exceptionDetails) throw new Error('evaluate: ' + r.exceptionDetails.text + ' in ' + expr);
  return r.result.value;
}

async function navigate(page, file) {
  const loaded = new Promise((resolve) => { page.loaded = resolve; });
  await page.send('Page.navigate', { url: 'file://' + path.resolve(file) });
  await loaded;
  // two frames: the script has drawn and the layout has settled
  await evaluate(page, 'new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))');
}

async function mouse(page, type, x, y, extra = {}) {
  await page.send('Input.dispatchMouseEvent', Object.assign({ type, x, y, button: 'left',
    buttons: type === 'mouseReleased' ? 0 : 1, clickCount: 1 }, extra));
}

async function click(page, x, y) {
  await page.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x, y });
  await mouse(page, 'mousePressed', x, y);
  await mouse(page, 'mouseReleased', x, y);
}

// The viewport centre of the first element matching sel that is not
// covered there by another, or null.
async function centre(page, sel) {
  return evaluate(page, `(() => {
    for (const n of document.querySelectorAll(${JSON.stringify(sel)})) {
      n.scrollIntoView({block: 'center'});
      const r = n.getBoundingClientRect();
      const x = r.left + r.width / 2, y = r.top + Math.min(r.height / 2, 8);
      const top = document.elementFromPoint(x, y);
      if (top === n || n.contains(top)) return [x, y];
    }
    return null;
  })()`);
}

async function screenshot(page, file) {
  const m = await page.send('Page.getLayoutMetrics');
  const size = m.cssContentSize || m.contentSize;
  const height = Math.ceil(Math.min(size.height, 4000));
  await page.send('Emulation.setDeviceMetricsOverride',
    { width: WIDTH, height, deviceScaleFactor: 1, mobile: false });
  await evaluate(page, 'new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))');
  const shot = await page.send('Page.captureScreenshot', { format: 'png' });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, Buffer.from(shot.data, 'base64'));
  await page.send('Emulation.setDeviceMetricsOverride',
    { width: WIDTH, height: HEIGHT, deviceScaleFactor: 1, mobile: false });
}

// What the page shows, for the checks.
const SUMMARY = `(() => {
  const q = (s) => document.querySelectorAll(s).length;
  const chart = document.getElementById('chart');
  const roles = {};
  document.querySelectorAll('#chart .fail').forEach((n) => {
    n.classList.forEach((c) => { if (c.startsWith('fail-')) roles[c.slice(5)] = (roles[c.slice(5)] || 0) + 1; });
  });
  return {
    verdict: document.getElementById('verdict').textContent,
    fails: q('#chart .fail'), roles, objects: q('#objects li'),
    boxes: q('#chart [data-t=box]') + q('#chart [data-t=agg]'),
    elements: chart.querySelectorAll('*').length,
    view: chart.dataset.view, visible: +chart.dataset.visible, drawn: +chart.dataset.drawn,
    info: document.getElementById('info').textContent,
    data: JSON.parse(document.getElementById('data').textContent).fail.marks.length,
    dataBoxes: JSON.parse(document.getElementById('data').textContent).boxes.length,
    scripts: q('script[src]') + q('link[href]') + q('img[src]') + q('iframe'),
  };
})()`;

function expect(errors, ok, what) {
  if (!ok) errors.push(what);
}

async function checkStatic(page, c, errors) {
  const s = await evaluate(page, SUMMARY);
  expect(errors, s.verdict.startsWith('verdict ' + c.verdict),
    `header says "${s.verdict}", not verdict ${c.verdict}`);
  expect(errors, s.scripts === 0, 'the page loads something from elsewhere');
  expect(errors, s.objects === s.data, `${s.objects} failing objects listed, ${s.data} in the data`);
  expect(errors, s.elements < 60000, `${s.elements} SVG elements: too many to stay usable`);
  if (!c.roles.length)
    expect(errors, s.fails === 0, `${s.fails} failing objects drawn for a certified program`);
  for (const r of c.roles)
    expect(errors, s.roles[r] > 0, `no element with class fail-${r} (have: ${Object.keys(s.roles).join(' ') || 'none'})`);
  expect(errors, s.boxes > 0 || !s.dataBoxes, 'no plane boxes drawn');
  return s;
}

// The header's first failing object, then one on the chart: the details
// show it.
async function checkClick(page, c, errors) {
  const info = () => evaluate(page, "document.getElementById('info').textContent");
  const li = await centre(page, '#objects li');
  if (!li) return errors.push('no failing object listed to click');
  await click(page, li[0], li[1]);
  let text = await info();
  expect(errors, text.includes(c.info), `details after picking the first failing object show "${text.slice(0, 160)}", without "${c.info}"`);
  const at = await centre(page, '#chart .fail.mark');
  if (!at) return errors.push('no failing mark on the chart to click');
  await click(page, at[0], at[1]);   // unpins the first
  await click(page, at[0], at[1]);   // pins this one
  text = await info();
  const titles = await evaluate(page, "JSON.parse(document.getElementById('data').textContent).fail.marks.map(m => m.title)");
  expect(errors, titles.some((t) => text.startsWith(t)), `details after clicking a mark show "${text.slice(0, 160)}", no mark's title`);
}

async function checkHover(page, errors) {
  const at = await centre(page, '#chart [data-t=box], #chart [data-t=agg]');
  if (!at) return;
  await page.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x: at[0], y: at[1] });
  const info = await evaluate(page, "document.getElementById('info').textContent");
  expect(errors, /bytes/.test(info), `hovering a box shows "${info.slice(0, 120)}"`);
}

// Drag across part of the chart: the view must narrow.  Then the header's
// first failing object zooms to it.
async function checkZoom(page, c, errors) {
  const before = await evaluate(page, 'document.getElementById("chart").dataset.view');
  const box = await evaluate(page, `(() => { const r = document.getElementById('chart').getBoundingClientRect();
    return [r.left, r.top, r.width, r.height]; })()`);
  const y = box[1] + box[3] / 2, x0 = box[0] + box[2] * 0.4, x1 = box[0] + box[2] * 0.6;
  await mouse(page, 'mousePressed', x0, y);
  await mouse(page, 'mouseMoved', (x0 + x1) / 2, y);
  await mouse(page, 'mouseMoved', x1, y);
  await mouse(page, 'mouseReleased', x1, y);
  const after = await evaluate(page, 'document.getElementById("chart").dataset.view');
  expect(errors, after !== before, `dragging did not zoom (view ${before})`);
  if (c.roles.length) {
    await click(page, box[0] + 4, box[1] + 4);   // unpin
    const li = await centre(page, '#objects li');
    if (li) await click(page, li[0], li[1]);
    const focus = await evaluate(page, SUMMARY);
    expect(errors, focus.fails > 0, 'after picking a failing object, none is drawn');
    expect(errors, focus.info.includes(c.info), `details after picking show "${focus.info.slice(0, 120)}"`);
  }
}

async function runCase(browser, c) {
  const errors = [];
  const page = await openPage(browser);
  try {
    await navigate(page, c.page);
    const s = await checkStatic(page, c, errors);
    // a large program: the overview first, then zoomed in by the checks
    if (c.zoom) await screenshot(page, c.screenshot);
    await checkHover(page, errors);
    if (c.roles.length) await checkClick(page, c, errors);
    if (c.zoom) {
      await checkZoom(page, c, errors);
      await screenshot(page, c.screenshot.replace(/\.png$/, '-zoom.png'));
    } else {
      await screenshot(page, c.screenshot);
    }
    errors.push(...page.problems);
    return { errors, summary: s };
  } finally {
    await browser.send('Target.closeTarget', { targetId: page.targetId }).catch(() => {});
  }
}

async function main() {
  const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const browser = new Browser();
  let passed = 0, failed = 0;
  try {
    for (const c of cases) {
      const t0 = Date.now();
      let r;
      try {
        r = await runCase(browser, c);
      } catch (e) {
        r = { errors: [String(e.message || e)], summary: null };
      }
      const ms = Date.now() - t0, s = r.summary;
      const what = s ? `${s.fails} failing elements, ${s.drawn} of ${s.visible} boxes drawn, ${s.elements} SVG elements` : '';
      if (r.errors.length) {
        failed++;
        console.log(`FAIL ${c.name} (${ms} ms): ${r.errors.join('; ')}`);
      } else {
        passed++;
        console.log(`PASS ${c.name} (${ms} ms): ${what}; ${path.relative(process.cwd(), c.screenshot)}`);
      }
    }
  } catch (e) {
    console.log('FAIL browser: ' + (e.message || e) + '\n' + browser.stderr);
    failed++;
  } finally {
    await browser.close();
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main();
