/*
 * arena-certify --html: draws the report (embedded by tools/embed.py).
 *
 * The data, from tools/html_report.c, in the element #data:
 *   meta    {file, verdict (a string: 64 bits), condition, reason,
 *            explanation, and counts: launches, refs, executed, instances,
 *            walk_columns, planes, keys, boxes, boxes_left_out, repeats}
 *   panes   [{y0, y1, lo, end, windows: [[y0, y1, name, index, base, end]],
 *             ticks: [[y, "0x..", tensor]]}]
 *   globals [[name, "0x offset", "0x size", y0, y1]]
 *   keys    {key: [name, "0x offset", "0x size", y0, y1]}: plane keys
 *   phases  {phase: [identity, [[key, carried]...]]}
 *   cols    [[kind, ...]]: kind 0 an instance, 1 one that began in a fold:
 *             [kind, instance, phase, ref, launch0, ordinal0, launch1,
 *              ordinal1, launches shown];
 *           2 a fold: [2, first instance, instances, of refs, repeat or
 *             first ref, first iteration, last iteration, iterations];
 *           3 a gap: [3, first instance, last instance, walk columns];
 *           4 what never runs, for a failing object: [4, phase, launch]
 *   spans   [[c0, c1, of refs, repeat or first ref, iteration, total]]
 *   boxes   flat, four numbers a box: key, first column, last column,
 *           flags (1 starts carried, 2 its key was not intact, 4 carried on)
 *   fail    {cols: [[column, role]], marks: [{role, c0, c1, full,
 *            y: [[y0, y1]], title, label, info: [[label, text]],
 *            values (a word in a repeat): [[iteration, "0x..", [[y0, y1]]]]}]};
 *           role "advisory" (spec 6, any verdict): a tensor outside the
 *           windows, full width
 * y is in axis units, 0 .. 1e6, top to bottom; columns index cols.
 * Instance numbers past 2^53 arrive as strings.
 *
 * Every name is put in the page with textContent or setAttribute, never
 * parsed as markup.
 */
(function () {
  'use strict';

  var D = JSON.parse(document.getElementById('data').textContent);
  var svg = document.getElementById('chart');
  var NS = svg.namespaceURI;   /* the SVG namespace, from the parser */
  var plot = document.getElementById('plot');
  var infoBox = document.getElementById('info');

  var AXIS = 1000000;
  var INSTANCE = 0, CONTINUED = 1, FOLD = 2, GAP = 3, EXTRA = 4;
  var STARTS_CARRIED = 1, BROKEN = 2, USED = 4;
  var DRAW_LIMIT = 2500;   /* boxes drawn one by one; past it, merged per key */
  var LABEL_LIMIT = 400;
  var M = { l: 150, r: 14, t: 140, b: 12 };

  var COL_ROLE_LABEL = {
    instance: 'fails here', earlier: 'declared here', intervening: 'overwrote here',
    launch: 'failing launch', phase: 'failing phase'
  };

  var cols = D.cols, nCols = cols.length;
  var boxes = D.boxes, nBoxes = boxes.length / 4;
  var marks = D.fail.marks;
  var failCol = {};
  D.fail.cols.forEach(function (c) { failCol[c[0]] = c[1]; });

  /* column positions: folds are narrower, gaps wider the more they hide */
  var X = new Float64Array(nCols + 1);
  for (var i = 0; i < nCols; i++)
    X[i + 1] = X[i] + (cols[i][0] === FOLD ? 0.6 :
                       cols[i][0] === GAP ? Math.min(12, 1 + cols[i][3] / 50) : 1);
  var XT = Math.max(X[nCols], 1);

  var view = fullView();
  var pinned = null, geo = null, drag = null;

  function fullView() { return { x0: 0, x1: XT, y0: 0, y1: AXIS }; }

  /* ---- small helpers ---- */

  function el(name, attrs, parent, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function h(name, parent, text, cls) {
    var e = document.createElement(name);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function short(s, n) {
    s = String(s);
    return s.length > n ? s.slice(0, n - 1) + '\u2026' : s;
  }

  function hue(s) {
    var x = 2166136261;
    for (var i = 0; i < s.length; i++) {
      x ^= s.charCodeAt(i);
      x = Math.imul(x, 16777619);
    }
    return (x >>> 0) % 360;
  }

  /* "[0x1400, 0x1500)" from hex offset and size (BigInt: 64 bits) */
  function range(off, size) {
    var end = BigInt(off) + BigInt(size);
    return '[' + off + ', ' + (end >= (1n << 64n) ? '2^64' : '0x' + end.toString(16)) + ')';
  }

  function bytes(size) {
    var n = BigInt(size);
    return n.toString() + ' bytes' + (n >= 1024n ? ' (' + size + ')' : '');
  }

  function phaseName(p) {
    var ph = D.phases[p];
    return ph ? "'" + ph[0] + "'" : p === null ? '(none)' : 'phases[' + p + ']';
  }

  function colName(c) {
    var col = cols[c];
    if (!col) return '?';
    if (col[0] === INSTANCE || col[0] === CONTINUED)
      return 'instance ' + col[1] + ' (phase ' + phaseName(col[2]) + ')';
    if (col[0] === FOLD) return 'folded iterations';
    if (col[0] === GAP) return 'instances not drawn';
    return extraName(col) + ' (never runs)';
  }

  function extraName(col) {
    return col[2] !== null ? 'launch ' + col[2] + (col[1] !== null ? ' (phase ' + phaseName(col[1]) + ')' : '')
                           : 'phase ' + phaseName(col[1]);
  }

  function launchText(l, t) {
    return l === null ? '-' : String(l) + (t === null ? '' : ' (iteration ' + t + ')');
  }

  /* ---- geometry ---- */

  /* the chart's height follows the data, not the window, so that a
   * screenshot of the whole page is the page */
  function measure() {
    var w = Math.max(640, plot.clientWidth);
    var hgt = Math.min(960, 600 + 60 * Math.max(0, D.panes.length - 1));
    /* narrow columns have their labels on end, and need the room */
    M.t = (w - M.l - M.r) / (view.x1 - view.x0) >= 70 ? 92 : 140;
    geo = { w: w, h: hgt, pw: w - M.l - M.r, ph: hgt - M.t - M.b };
  }

  function sx(x) { return M.l + (x - view.x0) * geo.pw / (view.x1 - view.x0); }
  function sy(y) { return M.t + (y - view.y0) * geo.ph / (view.y1 - view.y0); }
  function ux(px) { return view.x0 + (px - M.l) * (view.x1 - view.x0) / geo.pw; }
  function uy(py) { return view.y0 + (py - M.t) * (view.y1 - view.y0) / geo.ph; }

  /* the pixel span of columns c0..c1, at least minW wide */
  function colSpan(c0, c1, minW) {
    var a = sx(X[c0]), b = sx(X[c1 + 1]);
    if (b - a < minW) { var m = (a + b) / 2; a = m - minW / 2; b = m + minW / 2; }
    return [a, b];
  }

  function ySpan(y0, y1, minH) {
    var a = sy(y0), b = sy(y1);
    if (b - a < minH) { var m = (a + b) / 2; a = m - minH / 2; b = m + minH / 2; }
    return [a, b];
  }

  function visibleX(x0, x1) { return x1 > view.x0 && x0 < view.x1; }
  function visibleY(y0, y1) { return y1 >= view.y0 && y0 <= view.y1; }

  /* ---- drawing ---- */

  function defs() {
    var d = el('defs', {}, svg);
    var pat = function (id, color, bg, gapw) {
      var p = el('pattern', { id: id, width: gapw, height: gapw, patternUnits: 'userSpaceOnUse',
                              patternTransform: 'rotate(45)' }, d);
      el('rect', { width: gapw, height: gapw, fill: bg }, p);
      el('line', { x1: 0, y1: 0, x2: 0, y2: gapw, stroke: color, 'stroke-width': 2 }, p);
    };
    pat('foldhatch', '#c3cad8', '#eef1f6', 7);
    pat('gaphatch', '#cfd3da', '#f3f4f6', 5);
    pat('ovlhatch', 'rgba(198,40,40,0.75)', 'rgba(198,40,40,0.12)', 5);
    pat('outside', '#e6e8ec', '#fafafa', 9);
    var clip = el('clipPath', { id: 'clip' }, d);
    el('rect', { x: M.l, y: M.t, width: geo.pw, height: geo.ph }, clip);
  }

  function drawPanes(g, axisG) {
    D.panes.forEach(function (p, pi) {
      if (!visibleY(p.y0, p.y1)) return;
      var ys = ySpan(p.y0, p.y1, 2);
      el('rect', { x: M.l, y: ys[0], width: geo.pw, height: ys[1] - ys[0],
                   class: 'pane outside', 'data-t': 'pane', 'data-i': pi }, g);
      p.windows.forEach(function (w, wi) {
        var wy = ySpan(w[0], w[1], 1);
        el('rect', { x: M.l, y: wy[0], width: geo.pw, height: wy[1] - wy[0], class: 'win',
                     'data-t': 'win', 'data-i': pi + ':' + wi }, g);
        el('line', { x1: 14, x2: 14, y1: wy[0] + 1, y2: wy[1] - 1, class: 'winline' }, axisG);
        var room = wy[1] - wy[0];
        if (room > 24) {
          var label = short((w[2] ? w[2] + ' ' : 'window ') + '[' + w[4] + ', ' + w[5] + ')',
                            Math.max(4, Math.floor(room / 6.2)));
          el('text', { x: 10, y: (wy[0] + wy[1]) / 2, class: 'winlabel', 'text-anchor': 'middle',
                       transform: 'rotate(-90 10 ' + (wy[0] + wy[1]) / 2 + ')',
                       'data-t': 'win', 'data-i': pi + ':' + wi }, axisG, label);
        }
      });
      drawTicks(p, axisG);
    });
  }

  /* address labels: tensor starts first, then the rest, never closer than 13px */
  function drawTicks(p, axisG) {
    var taken = [];
    var free = function (y) {
      for (var i = 0; i < taken.length; i++) if (Math.abs(taken[i] - y) < 13) return false;
      return true;
    };
    var put = function (y, text, cls) {
      if (y < M.t - 1 || y > M.t + geo.ph + 1 || !free(y)) return;
      taken.push(y);
      el('line', { x1: M.l - 5, x2: M.l, y1: y, y2: y, class: 'tick' }, axisG);
      el('text', { x: M.l - 8, y: y + 3.5, 'text-anchor': 'end', class: 'ticklabel ' + cls }, axisG, text);
    };
    p.ticks.forEach(function (t) { if (t[2]) put(sy(t[0]), t[1], 't'); });
    p.ticks.forEach(function (t) { if (!t[2]) put(sy(t[0]), t[1], ''); });
    put(sy(p.y1), p.end, '');
  }

  function drawColumns(g) {
    var step = geo.pw / (view.x1 - view.x0);
    for (var c = 0; c < nCols; c++) {
      if (!visibleX(X[c], X[c + 1])) continue;
      var k = cols[c][0], a = sx(X[c]), w = sx(X[c + 1]) - a;
      var cls = k === FOLD ? 'fold' : k === GAP ? 'gap' : k === EXTRA ? 'extra' : null;
      if (cls)
        el('rect', { x: a, y: M.t, width: Math.max(w, 1), height: geo.ph, class: cls,
                     'data-t': 'col', 'data-i': c }, g);
      else if (step > 3 && c > 0)
        el('line', { x1: a, x2: a, y1: M.t, y2: M.t + geo.ph, class: 'colsep' }, g);
      if (failCol[c] !== undefined) {
        var s = colSpan(c, c, 8);
        el('rect', { x: s[0], y: M.t, width: s[1] - s[0], height: geo.ph,
                     class: 'fail fail-col fail-col-' + failCol[c], 'data-t': 'col', 'data-i': c }, g);
      }
    }
  }

  function drawGlobals(g) {
    D.globals.forEach(function (t, i) {
      if (!visibleY(t[3], t[4])) return;
      var ys = ySpan(t[3], t[4], 2);
      el('rect', { x: M.l, y: ys[0], width: geo.pw, height: ys[1] - ys[0], class: 'global',
                   'data-t': 'glob', 'data-i': i }, g);
      if (ys[1] - ys[0] >= 11)
        el('text', { x: M.l + 6, y: Math.min(ys[0] + 12, (ys[0] + ys[1]) / 2 + 4), class: 'glabel' },
           g, short(t[0], 40) + ' (global)');
    });
  }

  function visibleBoxes() {
    var out = [];
    for (var b = 0; b < nBoxes; b++) {
      var key = D.keys[boxes[4 * b]];
      var c0 = boxes[4 * b + 1], c1 = boxes[4 * b + 2];
      if (visibleX(X[c0], X[c1 + 1]) && visibleY(key[3], key[4])) out.push(b);
    }
    return out;
  }

  function boxStyle(key, flags) {
    var hh = hue(key[0]);
    return { fill: 'hsl(' + hh + ',62%,' + (flags & STARTS_CARRIED ? 80 : 72) + '%)',
             stroke: 'hsl(' + hh + ',45%,38%)' };
  }

  function drawBox(g, b, labels) {
    var kid = boxes[4 * b], key = D.keys[kid], flags = boxes[4 * b + 3];
    var xs = colSpan(boxes[4 * b + 1], boxes[4 * b + 2], 1.5), ys = ySpan(key[3], key[4], 1.5);
    var st = boxStyle(key, flags);
    var inset = xs[1] - xs[0] > 8 ? 2 : 0;
    el('rect', { x: xs[0] + inset, y: ys[0], width: xs[1] - xs[0] - 2 * inset, height: ys[1] - ys[0],
                 fill: st.fill, stroke: st.stroke, class: 'box' + (flags & BROKEN ? ' broken' : ''),
                 'data-t': 'box', 'data-i': b }, g);
    var w = xs[1] - xs[0] - 2 * inset, hh = ys[1] - ys[0];
    if (labels.n < LABEL_LIMIT && hh >= 12 && w >= 14) {
      var text = short(key[0], Math.floor((w - 6) / 6.6));
      if (text.length) {
        labels.n++;
        el('text', { x: xs[0] + inset + 4, y: ys[0] + Math.min(13, hh / 2 + 4), class: 'blabel' }, g, text);
      }
    }
  }

  /* Too many boxes to draw: boxes in the same pixel rows (one place in
   * memory, whatever their names) closer than 2px merge into one. */
  function drawMerged(g, list) {
    var rows = list.map(function (b) {
      var key = D.keys[boxes[4 * b]], ys = ySpan(key[3], key[4], 1);
      return { b: b, y0: Math.round(ys[0]), y1: Math.round(ys[1]),
               x0: sx(X[boxes[4 * b + 1]]), x1: sx(X[boxes[4 * b + 2] + 1]) };
    });
    rows.sort(function (p, q) { return p.y0 - q.y0 || p.y1 - q.y1 || p.x0 - q.x0; });
    var merged = 0;
    for (var i = 0; i < rows.length;) {
      var r = rows[i], x1 = r.x1, n = 1, broken = boxes[4 * r.b + 3] & BROKEN, j = i + 1;
      for (; j < rows.length && rows[j].y0 === r.y0 && rows[j].y1 === r.y1 && rows[j].x0 - x1 <= 2; j++) {
        x1 = Math.max(x1, rows[j].x1);
        broken |= boxes[4 * rows[j].b + 3] & BROKEN;
        n++;
      }
      var st = n > 1 ? { fill: '#b9c4d8', stroke: '#6f7f9c' } : boxStyle(D.keys[boxes[4 * r.b]], 0);
      el('rect', { x: r.x0, y: r.y0, width: Math.max(x1 - r.x0, 1), height: Math.max(r.y1 - r.y0, 1),
                   fill: st.fill, stroke: st.stroke, class: 'box agg' + (broken ? ' broken' : ''),
                   'data-t': 'agg', 'data-i': r.b + ':' + n + ':' + boxes[4 * rows[j - 1].b + 2] }, g);
      merged++;
      i = j;
    }
    return merged;
  }

  function drawBoxes(g) {
    var list = visibleBoxes(), labels = { n: 0 };
    svg.dataset.visible = list.length;
    if (list.length <= DRAW_LIMIT) {
      list.forEach(function (b) { drawBox(g, b, labels); });
      svg.dataset.drawn = list.length;
    } else {
      svg.dataset.drawn = drawMerged(g, list);
    }
  }


  function markRects(m) {
    var out = [];
    if (m.c0 === null && !m.full) return out;
    var xs = m.full ? [M.l, M.l + geo.pw] : colSpan(m.c0, m.c1, 10);
    if (!m.full && !visibleX(X[m.c0], X[m.c1 + 1])) return out;
    m.y.forEach(function (y) {
      if (!visibleY(y[0], y[1])) return;
      var ys = ySpan(y[0], y[1], m.role === 'word' ? 4 : 5);
      out.push([xs[0], ys[0], xs[1] - xs[0], ys[1] - ys[0]]);
    });
    return out;
  }

  function drawMarks(g, labelG) {
    var placed = [], rectG = el('g', {}, g), dotG = el('g', {}, g);
    /* a word's walk first, so its small labels sit by their points; its
     * dots go on top of every mark */
    marks.forEach(function (m) { if (m.values) drawValues(dotG, labelG, m, placed); });
    g = rectG;
    marks.forEach(function (m, i) {
      markRects(m).forEach(function (r, k) {
        if (m.role === 'word')   /* the value's address, across the chart */
          el('line', { x1: M.l, x2: M.l + geo.pw, y1: r[1] + r[3] / 2, y2: r[1] + r[3] / 2,
                       class: 'wordline' }, g);
        el('rect', { x: r[0], y: r[1], width: r[2], height: r[3], rx: 2,
                     class: 'fail mark fail-' + m.role, 'data-t': 'mark', 'data-i': i,
                     'data-role': m.role }, g);
        if (k === 0) placeLabel(labelG, m, r, placed);
      });
    });
    drawLink(g);
  }

  /* a word in a repeat: its value at each shown iteration, left to right
   * across its column, so the walk out of the named range shows */
  function drawValues(g, labelG, m, placed) {
    if (m.c0 === null || !visibleX(X[m.c0], X[m.c0 + 1])) return;
    var xs = colSpan(m.c0, m.c0, 10), n = m.values.length, idx = marks.indexOf(m);
    var pts = m.values.filter(function (v) { return v[2].length; }).map(function (v) {
      var i = m.values.indexOf(v);
      return { v: v, x: xs[0] + (xs[1] - xs[0]) * (n > 1 ? 0.12 + 0.76 * i / (n - 1) : 0.5),
               y: sy((v[2][0][0] + v[2][0][1]) / 2),
               bad: m.label.indexOf('(iteration ' + v[0] + ')') >= 0 };
    });
    if (pts.length > 1)
      el('polyline', { points: pts.map(function (p) { return p.x + ',' + p.y; }).join(' '),
                       class: 'wordwalk' }, g);
    pts.forEach(function (p) {
      el('circle', { cx: p.x, cy: p.y, r: p.bad ? 7 : 4.5, class: 'wordval' + (p.bad ? ' bad' : ''),
                     'data-t': 'mark', 'data-i': idx }, g);
      if (p.bad) return;   /* the mark's own label says it */
      var t = 'iteration ' + p.v[0] + ': ' + p.v[1], w = t.length * 6.2;
      var lx = Math.min(p.x + 8, M.l + geo.pw - w), ly = p.y + 4;
      var clash = placed.some(function (q) {
        return lx < q[0] + q[2] && q[0] < lx + w && ly - 11 < q[1] + q[3] && q[1] < ly + 3;
      });
      if (clash) return;
      placed.push([lx, ly - 11, w, 14]);
      el('text', { x: lx, y: ly, class: 'vallabel' }, labelG, t);
    });
  }

  /* a label by its mark: inside at the top, else above, else below,
   * never over another label */
  function placeLabel(g, m, r, placed) {
    var text = short(m.label, 48), w = text.length * 7 + 6, hgt = 15;
    var tries = [[r[0] + 5, r[1] + 14], [r[0], r[1] - 5], [r[0], r[1] + r[3] + 14],
                 [r[0] + r[2] + 6, r[1] + 12]];
    if (m.full)   /* a band's own label is at its left */
      tries = [[r[0] + r[2] - w - 6, r[1] + 14], [r[0] + r[2] - w - 6, r[1] - 5]];
    else if (m.role === 'word')   /* above it is the nearest range below */
      tries = [tries[2], tries[1], tries[3]];
    else if (r[2] < w || r[3] < 18) tries.shift();
    for (var i = 0; i < tries.length; i++) {
      var x = Math.min(Math.max(tries[i][0], M.l + 2), M.l + geo.pw - w), y = tries[i][1];
      var box = [x, y - 12, w, hgt];
      var clash = placed.some(function (p) {
        return box[0] < p[0] + p[2] && p[0] < box[0] + box[2] && box[1] < p[1] + p[3] && p[1] < box[1] + box[3];
      });
      if (clash || y < M.t + 12 || y > M.t + geo.ph) continue;
      placed.push(box);
      el('text', { x: x, y: y, class: 'mlabel ' + m.role }, g, text);
      return;
    }
  }

  /* (D): from the earlier declaration to the carried plane it should reach */
  function drawLink(g) {
    var from = null, to = null;
    marks.forEach(function (m) {
      if (m.role === 'earlier') from = markRects(m)[0];
      if (m.role === 'carried') to = markRects(m)[0];
    });
    if (!from || !to) return;
    var y = from[1] + Math.min(from[3], to[3]) / 2;
    el('path', { d: 'M' + (from[0] + from[2]) + ' ' + y + ' L' + to[0] + ' ' + y, class: 'fail fail-link' }, g);
  }

  /* ---- the column header: labels, shown iterations ---- */

  function colLabel(c) {
    var col = cols[c], k = col[0];
    if (k === INSTANCE || k === CONTINUED) return ['#' + col[1], D.phases[col[2]] ? D.phases[col[2]][0] : '-'];
    if (k === FOLD) return ['\u22ef', '\u00d7' + (col[6] - col[5] + 1)];
    if (k === GAP) return ['\u22ef', 'gap'];
    return ['never runs:', col[2] !== null ? 'launch ' + col[2] : phaseName(col[1])];
  }

  function drawHeader(g) {
    var step = geo.pw / (view.x1 - view.x0), every = Math.max(1, Math.ceil(14 / step));
    var wide = step >= 70, top = M.t - 4;
    for (var c = 0; c < nCols; c++) {
      if (!visibleX(X[c], X[c + 1])) continue;
      var fail = failCol[c] !== undefined;
      if (!fail && c % every) continue;
      var lab = colLabel(c), a = sx(X[c]), b = sx(X[c + 1]), mid = (a + b) / 2;
      var cls = 'collabel' + (fail ? ' failc' : '');
      var attrs = { class: cls, 'data-t': 'col', 'data-i': c };
      if (wide) {   /* across, with the failing role under it */
        el('text', Object.assign({ x: mid, y: top - (fail ? 30 : 16), 'text-anchor': 'middle' }, attrs), g,
           short(lab[0] + ' ' + lab[1], Math.floor((b - a) / 7)));
        if (fail)
          el('text', { x: mid, y: top - 16, 'text-anchor': 'middle', class: 'collabel failc' }, g,
             COL_ROLE_LABEL[failCol[c]] || failCol[c]);
      } else {
        el('text', Object.assign({ x: mid + 4, y: top, transform: 'rotate(-90 ' + (mid + 4) + ' ' + top + ')' },
                                 attrs), g, short(lab[0] + ' ' + lab[1], Math.floor((M.t - 44) / 6)));
      }
    }
    drawSpans(g);
  }

  /* "repeat 0: iteration 1 of 4", or several when one instance spans them */
  function spanLabel(s, its, px) {
    var n = s[5], list = its.length > 4 ? its[0] + ', ' + its[1] + ' .. ' + its[its.length - 1] : its.join(', ');
    var word = its.length > 1 ? 'iterations ' : 'iteration ';
    var long = s[2] ? 'references from schedule[' + s[3] + '], \u00d7' + n + ': run ' + list
                    : 'repeat ' + s[3] + ': ' + word + list + ' of ' + n;
    var brief = (s[2] ? 'refs \u00d7' + n + ': ' : 'r' + s[3] + ' it ') + list + (s[2] ? '' : '/' + n);
    if (long.length * 6 < px) return long;
    return brief.length * 6 < px ? brief : '';
  }

  /* shown iterations over the columns: one bracket per column range */
  function drawSpans(g) {
    var rowY = [16, 32], groups = {}, order = [];
    D.spans.forEach(function (s) {
      var id = s.slice(0, 4).join(':');
      if (!groups[id]) { groups[id] = { s: s, its: [] }; order.push(id); }
      groups[id].its.push(s[4]);
    });
    order.forEach(function (id) {
      var s = groups[id].s;
      if (!visibleX(X[s[0]], X[s[1] + 1])) return;
      var a = Math.max(sx(X[s[0]]) + 2, M.l), b = Math.min(sx(X[s[1] + 1]) - 2, M.l + geo.pw);
      var y = rowY[s[2] ? 0 : 1], cls = s[2] ? ' refs' : '';
      el('path', { d: 'M' + a + ' ' + (y + 4) + ' V' + y + ' H' + b + ' V' + (y + 4), class: 'span' + cls }, g);
      var label = spanLabel(s, groups[id].its, b - a);
      if (label)
        el('text', { x: (a + b) / 2, y: y - 3, 'text-anchor': 'middle', class: 'spanlabel' + cls }, g, label);
    });
  }

  /* ---- all of it ---- */

  function render() {
    measure();
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute('viewBox', '0 0 ' + geo.w + ' ' + geo.h);
    svg.setAttribute('height', geo.h);
    defs();
    var plotG = el('g', { 'clip-path': 'url(#clip)' }, svg);
    var axisG = el('g', {}, svg), headG = el('g', {}, svg);
    var panesG = el('g', {}, plotG), colsG = el('g', {}, plotG), globG = el('g', {}, plotG);
    var boxG = el('g', {}, plotG), markG = el('g', {}, plotG), labelG = el('g', {}, svg);
    drawPanes(panesG, axisG);
    drawColumns(colsG);
    drawGlobals(globG);
    drawBoxes(boxG);
    drawMarks(markG, labelG);
    drawHeader(headG);
    if (nCols === 0)
      el('text', { x: M.l + 12, y: M.t + 20, class: 'collabel sub' }, svg, 'no launch executes');
    svg.dataset.view = [view.x0, view.x1, view.y0, view.y1].map(function (v) { return +v.toFixed(3); }).join(',');
    if (pinned) highlight(pinned);
  }

  /* ---- details ---- */

  function describe(t, i) {
    var rows = [], title = '';
    var add = function (k, v) { rows.push([k, v]); };
    if (t === 'box' || t === 'agg') {
      var parts = String(i).split(':'), b = +parts[0];
      var key = D.keys[boxes[4 * b]], flags = boxes[4 * b + 3];
      var last = t === 'agg' ? +parts[2] : boxes[4 * b + 2];
      title = t === 'agg' && +parts[1] > 1 ? parts[1] + ' plane values' : "plane '" + key[0] + "'";
      add('bytes', range(key[1], key[2]));
      add('size', bytes(key[2]));
      if (t === 'agg') {
        if (+parts[1] > 1) add('first', "'" + key[0] + "'");
        add('boxes', parts[1] + ' merged at this zoom: drag to zoom in');
        add('from', colName(boxes[4 * b + 1]));
        add('to', colName(last));
      } else {
        var c0 = cols[boxes[4 * b + 1]];
        add('declared', colName(boxes[4 * b + 1]) + (flags & STARTS_CARRIED ? ', carried' : ', fresh'));
        if (c0[0] === INSTANCE || c0[0] === CONTINUED) add('at launch', launchText(c0[4], c0[5]));
        add('live until', flags & USED ? colName(last) + ' (carried on)' : 'that instance only');
        if (flags & BROKEN)
          add('(D)', 'carried, but its key was not intact: never declared, or overwritten since');
      }
    } else if (t === 'glob') {
      var g = D.globals[i];
      title = "global '" + g[0] + "'";
      add('bytes', range(g[1], g[2]));
      add('size', bytes(g[2]));
      add('index', 'globals[' + i + ']');
    } else if (t === 'mark') {
      var m = marks[i];
      title = m.title;
      m.info.forEach(function (p) { add(p[0], String(p[1])); });
      if (m.values)
        add('by iteration', m.values.map(function (v) { return v[0] + ': ' + v[1]; }).join(', '));
      if (m.c0 !== null) add('column', colName(m.c0) + (m.c1 !== m.c0 ? ' .. ' + colName(m.c1) : ''));
    } else if (t === 'col') {
      return describeCol(+i);
    } else if (t === 'pane' || t === 'win') {
      var pi = String(i).split(':'), p = D.panes[+pi[0]];
      title = 'addresses [' + p.lo + ', ' + p.end + ')';
      p.windows.forEach(function (w) {
        add('window ' + w[3], (w[2] ? "'" + w[2] + "' " : '') + '[' + w[4] + ', ' + w[5] + ')');
      });
      if (!p.windows.length) add('windows', 'none: outside every window');
    }
    return { title: title, rows: rows };
  }

  function describeCol(c) {
    var col = cols[c], rows = [], title;
    var add = function (k, v) { rows.push([k, v]); };
    if (col[0] === INSTANCE || col[0] === CONTINUED) {
      title = 'instance ' + col[1];
      add('phase', phaseName(col[2]) + ' (phases[' + col[2] + '])');
      if (col[0] === CONTINUED) {
        var fold = cols[c - 1];   /* the walk opens this column right after a fold */
        add('began', !fold || fold[0] !== FOLD ? 'before this column, across folded iterations'
            : fold[2] !== 0 ? 'inside the folded iterations before'
            : 'before the folded iterations, and runs on across them');
      }
      add('launches', launchText(col[4], col[5]) + (col[8] > 1 ? ' .. ' + launchText(col[6], col[7]) : ''));
      add('shown', col[8] + ' launch' + (col[8] === 1 ? '' : 'es'));
      add('reference', 'schedule[' + col[3] + ']');
      if (D.phases[col[2]]) add('declares', declares(col[2]));
    } else if (col[0] === FOLD) {
      title = col[3] ? 'identical references folded' : 'repeat ' + col[4] + ': iterations folded';
      add(col[3] ? 'references' : 'iterations', col[5] + ' .. ' + col[6] + ' of ' + col[7] +
          (col[3] ? ' (schedule[' + col[4] + '] on)' : ''));
      add('instances', col[2] + (col[1] !== null ? ' (from instance ' + col[1] + ')' : ''));
      add('why', 'each later run starts in the same state and makes the same checks as the one before it');
    } else if (col[0] === GAP) {
      title = 'not drawn';
      add('instances', col[1] === null ? '-' : col[1] + ' .. ' + col[2]);
      add('columns', String(col[3]));
      add('why', 'a long walk keeps its start, its end and what surrounds the failing objects');
    } else {
      title = extraName(col) + ' never runs';
      add('shown', col[2] !== null ? 'for the failing object: the schedule never executes this launch'
                                   : 'for the failing object: no launch of the schedule has this phase');
      if (col[1] !== null && D.phases[col[1]]) add('declares', declares(col[1]));
    }
    if (failCol[c] !== undefined) add('marked', COL_ROLE_LABEL[failCol[c]] || failCol[c]);
    return { title: title, rows: rows };
  }

  function declares(p) {
    return D.phases[p][1].map(function (x) {
      var k = D.keys[x[0]];
      return (k ? k[0] : '?') + (x[1] ? ' (carried)' : ' (fresh)');
    }).join(', ') || 'no planes';
  }

  function show(t, i) {
    var d = describe(t, i);
    infoBox.textContent = '';
    h('h3', infoBox, d.title);
    var table = h('table', infoBox);
    d.rows.forEach(function (r) {
      var tr = h('tr', table);
      h('th', tr, r[0]);
      h('td', tr, r[1]);
    });
  }

  function idle() {
    infoBox.textContent = '';
    h('p', infoBox, 'Hover over a box, band, column or mark for its names, addresses, sizes, ' +
      'instances and launches; click to keep it here.', 'hint');
  }

  function target(e) {
    var n = e.target;
    while (n && n !== svg && !(n.getAttribute && n.getAttribute('data-t'))) n = n.parentNode;
    return n && n !== svg ? { t: n.getAttribute('data-t'), i: n.getAttribute('data-i'), node: n } : null;
  }

  function highlight(p) {
    var old = svg.querySelectorAll('.hot');
    for (var k = 0; k < old.length; k++) old[k].classList.remove('hot');
    var n = svg.querySelector('[data-t="' + p.t + '"][data-i="' + p.i + '"]');
    if (n && n.tagName === 'rect') n.classList.add('hot');
  }

  /* ---- zoom ---- */

  function setView(v) {
    var minW = Math.min(XT, 3), minH = AXIS / 5000;
    if (v.x1 - v.x0 < minW) { var mx = (v.x0 + v.x1) / 2; v.x0 = mx - minW / 2; v.x1 = mx + minW / 2; }
    if (v.y1 - v.y0 < minH) { var my = (v.y0 + v.y1) / 2; v.y0 = my - minH / 2; v.y1 = my + minH / 2; }
    view = { x0: Math.max(0, v.x0), x1: Math.min(XT, v.x1), y0: Math.max(0, v.y0), y1: Math.min(AXIS, v.y1) };
    render();
  }

  function inPlot(px, py) {
    return px >= M.l && px <= M.l + geo.pw && py >= M.t && py <= M.t + geo.ph;
  }

  function local(e) {
    var r = svg.getBoundingClientRect();
    return [(e.clientX - r.left) * geo.w / r.width, (e.clientY - r.top) * geo.h / r.height];
  }

  svg.addEventListener('mousedown', function (e) {
    var p = local(e);
    if (e.button !== 0 || !inPlot(p[0], p[1])) return;
    drag = { x: p[0], y: p[1], rect: el('rect', { class: 'sel', x: p[0], y: p[1], width: 0, height: 0 }, svg) };
    e.preventDefault();
  });

  window.addEventListener('mousemove', function (e) {
    if (!drag) return;
    var p = local(e);
    var x = Math.max(M.l, Math.min(M.l + geo.pw, p[0])), y = Math.max(M.t, Math.min(M.t + geo.ph, p[1]));
    var tall = Math.abs(y - drag.y) >= 12;
    drag.rect.setAttribute('x', Math.min(x, drag.x));
    drag.rect.setAttribute('width', Math.abs(x - drag.x));
    drag.rect.setAttribute('y', tall ? Math.min(y, drag.y) : M.t);
    drag.rect.setAttribute('height', tall ? Math.abs(y - drag.y) : geo.ph);
    drag.end = [x, y];
  });

  window.addEventListener('mouseup', function () {
    if (!drag) return;
    var d = drag;
    drag = null;
    if (d.rect.parentNode) d.rect.parentNode.removeChild(d.rect);
    if (!d.end || Math.abs(d.end[0] - d.x) < 5) return;
    var v = { x0: ux(Math.min(d.x, d.end[0])), x1: ux(Math.max(d.x, d.end[0])), y0: view.y0, y1: view.y1 };
    if (Math.abs(d.end[1] - d.y) >= 12) {
      v.y0 = uy(Math.min(d.y, d.end[1]));
      v.y1 = uy(Math.max(d.y, d.end[1]));
    }
    setView(v);
  });

  svg.addEventListener('mousemove', function (e) {
    if (drag || pinned) return;
    var t = target(e);
    if (t) show(t.t, t.i);
  });

  svg.addEventListener('click', function (e) {
    var t = target(e);
    if (t && !(pinned && pinned.t === t.t && pinned.i === t.i)) {
      pinned = { t: t.t, i: t.i };
      show(t.t, t.i);
      infoBox.classList.add('pinned');
      highlight(pinned);
    } else {
      pinned = null;
      infoBox.classList.remove('pinned');
      highlight({ t: '', i: '' });
    }
  });

  svg.addEventListener('dblclick', function () { setView(fullView()); });
  document.getElementById('reset').addEventListener('click', function () { setView(fullView()); });
  document.getElementById('out').addEventListener('click', function () {
    var w = view.x1 - view.x0, hh = view.y1 - view.y0;
    setView({ x0: view.x0 - w / 2, x1: view.x1 + w / 2, y0: view.y0 - hh / 2, y1: view.y1 + hh / 2 });
  });
  window.addEventListener('resize', render);

  /* zooms to a mark, with some columns around it, and keeps it in the details */
  function focusMark(i) {
    var m = marks[i];
    if (m.c0 !== null && XT > 24) {
      var pad = Math.max(6, (X[m.c1 + 1] - X[m.c0]) * 2);
      var v = { x0: X[m.c0] - pad, x1: X[m.c1 + 1] + pad, y0: 0, y1: AXIS };
      var pane = D.panes.filter(function (p) { return m.y.length && p.y0 <= m.y[0][0] && m.y[0][0] <= p.y1; })[0];
      if (pane && pane.y1 - pane.y0 < AXIS * 0.9) { v.y0 = pane.y0; v.y1 = pane.y1; }
      view = v;
    }
    pinned = { t: 'mark', i: String(i) };
    infoBox.classList.add('pinned');
    setView(view);
    show('mark', i);
    var n = svg.querySelectorAll('[data-t="mark"][data-i="' + i + '"]');
    for (var k = 0; k < n.length; k++) n[k].classList.add('flash');
  }

  /* ---- the header's lists ---- */

  function objects() {
    var ol = document.getElementById('objects');
    marks.forEach(function (m, i) {
      var li = h('li', ol);
      var chip = h('span', li, undefined, 'chip');
      chip.style.color = getComputedStyle(document.documentElement)
        .getPropertyValue('--' + (m.role === 'overlap' ? 'tensor' : m.role)) || '#c62828';
      h('span', li, m.title);
      li.title = 'Show it';
      li.addEventListener('click', function () { focusMark(i); });
    });
  }

  function stats() {
    var s = D.meta, parts = [
      s.launches + ' launches', s.refs + ' references', s.executed + ' executed launches',
      s.instances + ' instances', s.keys + ' plane keys',
      nCols + ' columns' + (s.walk_columns > nCols - countExtra() ? ' (of ' + s.walk_columns + ': the rest in gaps)' : ''),
      s.boxes + ' boxes' + (s.boxes_left_out ? ' (' + s.boxes_left_out + ' more not drawn)' : '')
    ];
    document.getElementById('stats').textContent = parts.join(' \u00b7 ');
  }

  function countExtra() {
    return cols.filter(function (c) { return c[0] === EXTRA; }).length;
  }

  function legend() {
    var f = document.getElementById('legend');
    var item = function (label, draw) {
      var span = h('span', f);
      var s = document.createElementNS(NS, 'svg');
      s.setAttribute('width', 22);
      s.setAttribute('height', 14);
      span.appendChild(s);
      draw(s);
      span.appendChild(document.createTextNode(label));
    };
    var rect = function (s, attrs) { el('rect', Object.assign({ x: 1, y: 1, width: 20, height: 12 }, attrs), s); };
    item('plane value, from the instance that declares it to its last carried use', function (s) {
      rect(s, { fill: 'hsl(200,62%,72%)', stroke: 'hsl(200,45%,38%)' });
    });
    item('global (whole program)', function (s) { rect(s, { class: 'global' }); });
    item('carried but not intact (D)', function (s) {
      rect(s, { fill: 'hsl(20,62%,80%)', stroke: '#c62828', 'stroke-dasharray': '4 2', 'stroke-width': 1.6 });
    });
    item('plane values merged at this zoom', function (s) { rect(s, { fill: '#b9c4d8', stroke: '#6f7f9c' }); });
    item('folded iterations', function (s) { rect(s, { fill: '#eef1f6', stroke: '#b8bfcc' }); });
    item('instances not drawn', function (s) { rect(s, { fill: '#f3f4f6', stroke: '#b8bfcc', 'stroke-dasharray': '2 2' }); });
    item('failing object', function (s) { rect(s, { fill: 'none', stroke: '#d62728', 'stroke-width': 3 }); });
    if (marks.some(function (m) { return m.role === 'advisory'; }))
      item('advisory: a tensor with bytes outside every window', function (s) {
        rect(s, { class: 'fail-advisory' });
      });
  }

  objects();
  stats();
  legend();
  idle();
  render();
})();
