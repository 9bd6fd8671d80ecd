/* ---------- the timeline: workers and tasks over time, zoomable ---------- */
/* Lanes come from the page block's "zoom" (src/output/html.c: ns per bucket
 * of each worker, the runnable count, each detailed task, every lane at
 * the finest resolution its budget allowed), else from the report's
 * 100-bucket "timeline". A lane: {kind: 'worker'|'runnable'|'task', label,
 * ident, tid, start, bns, n (buckets from start, bns ns each), a, b (shares
 * of each bucket: busy and parked, running and scheduled; runnable: a, the
 * most runnable tasks as a share of max), alive: [from, to]}. Drawn on one
 * canvas, a pixel column the mean of the buckets under it (prefix sums), so
 * that detail appears as one zooms in, down to the lane's buckets. */
var B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
var B64V = (function () {
	var v = new Int8Array(128).fill(-1);
	for (var i = 0; i < 64; i++) v[B64.charCodeAt(i)] = i;
	return v;
})();
/* n shares (0..1) from a lane string: one base64url digit a bucket (its
 * share in 63rds), "c~N." c and N more of it. */
function decodeLane(str, n) {
	var out = new Float32Array(n), o = 0, i = 0, len = str.length;
	while (i < len && o < n) {
		var c = str.charCodeAt(i++), v = c < 128 ? B64V[c] : -1, rep = 1;
		if (v < 0) throw new Error('bad lane data at ' + (i - 1));
		if (i < len && str.charCodeAt(i) === 126) {
			var j = str.indexOf('.', i);
			if (j < 0) throw new Error('bad lane run at ' + i);
			rep += parseInt(str.slice(i + 1, j), 10) || 0;
			i = j + 1;
		}
		for (var f = v / 63, k = 0; k < rep && o < n; k++) out[o++] = f;
	}
	return out;
}
function prefix(v) {
	var p = new Float64Array(v.length + 1);
	for (var i = 0; i < v.length; i++) p[i + 1] = p[i] + v[i];
	return p;
}
/* The lane's arrays, decoded and summed on first use. */
function laneData(l) {
	if (!l.pa) {
		if (typeof l.a === 'string') l.a = decodeLane(l.a, l.n);
		if (typeof l.b === 'string') l.b = decodeLane(l.b, l.n);
		l.pa = prefix(l.a);
		l.pb = l.b ? prefix(l.b) : null;
		if (l.kind === 'runnable') {
			/* the most over 64-bucket blocks, for range maxima */
			l.blk = new Float32Array(Math.ceil(l.n / 64));
			for (var i = 0; i < l.n; i++) l.blk[i >> 6] = Math.max(l.blk[i >> 6], l.a[i]);
		}
	}
	return l;
}
function rangeMax(l, i0, i1) {
	var m = 0, i = i0;
	for (; i < i1 && (i & 63); i++) m = Math.max(m, l.a[i]);
	for (; i + 64 <= i1; i += 64) m = Math.max(m, l.blk[i >> 6]);
	for (; i < i1; i++) m = Math.max(m, l.a[i]);
	return m;
}
/* Bucket range [i0, i1) of lane l under [ta, tb), or null. */
function bucketRange(l, ta, tb) {
	var i0 = Math.max(0, Math.floor((ta - l.start) / l.bns)), i1 = Math.min(l.n, Math.ceil((tb - l.start) / l.bns));
	if (i1 <= i0) {
		if (tb <= l.start || ta >= l.start + l.n * l.bns) return null;
		i1 = i0 + 1;
	}
	return [i0, i1];
}
/* Mean shares (a, b) of l over [ta, tb), or null outside it. */
function laneAt(l, ta, tb) {
	var r = bucketRange(l, ta, tb);
	if (!r) return null;
	var k = r[1] - r[0];
	if (l.kind === 'runnable') return [rangeMax(l, r[0], r[1]), 0];
	return [(l.pa[r[1]] - l.pa[r[0]]) / k, l.pb ? (l.pb[r[1]] - l.pb[r[0]]) / k : 0];
}

/* A tick at t, steps of step apart: in the largest unit where the step is at
 * least a thousandth of it, with the digits the step needs ("+2.3525 s",
 * "+1,204.6 ms"). */
function tickLabel(t, step) {
	var units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'us'], [1, 'ns']], u = units[3];
	for (var i = 0; i < units.length; i++) if (step / units[i][0] >= 0.001) { u = units[i]; break; }
	var x = step / u[0], d = 0;
	while (d < 6 && Math.abs(Math.round(x * Math.pow(10, d)) - x * Math.pow(10, d)) > 1e-6 * Math.pow(10, d)) d++;
	return (t / u[0]).toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) + ' ' + u[1];
}

function heat(f) {
	/* light grey-blue (idle) to deep blue (always busy) */
	var a = [240, 243, 248], b = [23, 63, 130];
	f = Math.max(0, Math.min(1, f));
	f = Math.sqrt(f); /* short busy spells stay visible */
	return 'rgb(' + a.map(function (v, i) { return Math.round(v + (b[i] - v) * f); }).join(',') + ')';
}

/* The lanes of the page: from P.zoom, else from R.timeline; null if none. */
function timelineLanes() {
	var Z = obj(P.zoom), out = { workers: [], runnable: null, tasks: [], duration: 0, fine: null };
	function lane(kind, L, extra) {
		if (!obj(L) || !isNum(L.bucket_ns) || L.bucket_ns <= 0 || !isNum(L.buckets) || L.buckets <= 0) return null;
		var l = { kind: kind, start: isNum(L.start_ns) ? L.start_ns : 0, bns: L.bucket_ns, n: L.buckets,
			a: typeof L.a === 'string' ? L.a : new Float32Array(L.buckets), b: typeof L.b === 'string' ? L.b : null, max: L.max };
		Object.keys(extra).forEach(function (k) { l[k] = extra[k]; });
		l.alive = l.alive || [l.start, l.start + l.n * l.bns];
		return l;
	}
	if (Z && arr(Z.workers)) {
		out.duration = isNum(Z.duration_ns) ? Z.duration_ns : 0;
		Z.workers.filter(obj).forEach(function (w) {
			var l = lane('worker', w.lane, { tid: w.tid, label: 'tid ' + w.tid + (w.name != null ? ' ' + w.name : ''), name: w.name });
			if (l) { l.alive = [isNum(w.first_ns) ? w.first_ns : 0, l.start + l.n * l.bns]; out.workers.push(l); }
		});
		out.runnable = lane('runnable', Z.runnable, { label: 'runnable tasks' });
		(arr(Z.tasks) || []).filter(obj).forEach(function (t) {
			var l = lane('task', t.lane, { ident: taskIdent(t), seq: t.seq, fine: t.fine === true,
				label: (taskIdent(t) || '?') + ' ' + lastSeg(taskName(t)), name: taskName(t) });
			if (l) out.tasks.push(l);
		});
		if (out.workers.length) out.fine = out.workers[0].bns;
		return out;
	}
	/* the report's timeline: {start_ns, bucket_ns, buckets, workers: [{busy_ns: [...], ...}], tasks: [{running: [...], ...}]} */
	var tl = obj(R.timeline);
	if (!tl || !isNum(tl.bucket_ns) || tl.bucket_ns <= 0) return null;
	var bns = tl.bucket_ns, nb = isNum(tl.buckets) ? tl.buckets : 0;
	function fill(v, scale) {
		var a = new Float32Array(nb);
		(arr(v) || []).forEach(function (x, i) { if (i < nb && isNum(x)) a[i] = Math.max(0, Math.min(1, x * scale)); });
		return a;
	}
	if (!nb) return null;
	out.duration = isNum(R.duration_ns) && R.duration_ns > 0 ? R.duration_ns : nb * bns;
	(arr(tl.workers) || []).filter(obj).forEach(function (w) {
		out.workers.push({ kind: 'worker', tid: w.tid, name: w.name, label: 'tid ' + w.tid + (w.name != null ? ' ' + w.name : ''),
			start: 0, bns: bns, n: nb, a: fill(w.busy_ns, 1 / bns), b: fill(w.parked_ns, 1 / bns), alive: [0, nb * bns] });
	});
	var rm = arr(tl.runnable_max);
	if (rm) {
		var mx = Math.max.apply(null, [1].concat(rm.filter(isNum)));
		out.runnable = { kind: 'runnable', label: 'runnable tasks', start: 0, bns: bns, n: nb, a: fill(rm, 1 / mx), b: null, max: mx, alive: [0, nb * bns] };
	}
	(arr(tl.tasks) || []).filter(obj).forEach(function (t) {
		var run = fill(t.running, 1), sch = fill(t.scheduled, 1), idl = fill(t.idle, 1), first = -1, last = -1;
		for (var i = 0; i < nb; i++) if (run[i] + sch[i] + idl[i] > 0) { if (first < 0) first = i; last = i; }
		out.tasks.push({ kind: 'task', ident: taskIdent(t), seq: t.seq, fine: true, label: (taskIdent(t) || '?') + ' ' + lastSeg(taskName(t)),
			name: taskName(t), start: 0, bns: bns, n: nb, a: run, b: sch, alive: first < 0 ? [0, 0] : [first * bns, (last + 1) * bns] });
	});
	out.fine = bns;
	return out;
}

/* The long polls of the report on the worker (tid) and task (ident) lanes. */
function longPollMarks() {
	return (arr(R.long_polls) || []).filter(function (p) { return obj(p) && isNum(p.start_ns) && isNum(p.duration_ns); });
}

var RH = 18, GAP = 3, AXIS = 24;
/* A zoomable view of lanes: {el, setView(t0, t1), draw()}. opts: {duration,
 * fine (finest bucket), marks (long polls), onTask(ident), pinned (lanes
 * always shown first), limit (task lanes shown before "show more")}. */
function timelineView(lanes, opts) {
	var D = Math.max(1, opts.duration), t0 = 0, t1 = D, width = 800;
	var minSpan = Math.max(1000, Math.min(D, (opts.fine || 1000) * 4));
	var canvas = h('canvas', { 'class': 'tl', tabindex: 0, 'aria-label': 'timeline: ctrl+wheel or W/S zoom, drag or A/D pan' });
	var labels = h('div', { 'class': 'tl-labels' });
	var tipEl = h('div', { 'class': 'tl-tip', hidden: 'hidden' });
	var rangeEl = h('span', { 'class': 'count' });
	var marks = opts.marks || [];
	var shownTasks = opts.limit || 24;
	var all = [], drag = null;
	function buildLanes() {
		var t = lanes.tasks.slice(0, shownTasks);
		all = lanes.workers.concat(lanes.runnable ? [lanes.runnable] : [], t);
		while (labels.firstChild) labels.removeChild(labels.firstChild);
		add(labels, h('div', { 'class': 'tl-axis-lbl', style: 'height:' + AXIS + 'px' }, fmtNs(D) + ' in all'));
		all.forEach(function (l) {
			var kids = l.kind === 'task' && l.ident != null ? [taskLink(l.ident, l.ident), ' ', h('span', { text: lastSeg(l.name) })] : l.label;
			add(labels, h('div', { 'class': 'tl-lbl ' + l.kind, title: l.kind === 'task' ? l.ident + ' ' + l.name : l.label, style: 'height:' + (RH + GAP) + 'px' }, kids));
		});
		if (more) more.hidden = lanes.tasks.length <= shownTasks;
		if (more) more.textContent = 'Show ' + Math.min(lanes.tasks.length - shownTasks, 48) + ' more tasks (' + fmtCount(lanes.tasks.length) + ' in the timeline)';
	}
	function x(t) { return (t - t0) / (t1 - t0) * width; }
	function tAt(px) { return t0 + px / width * (t1 - t0); }
	function ticks() {
		var span = t1 - t0, raw = span / Math.max(2, width / 110), p = Math.pow(10, Math.floor(Math.log10(raw)));
		var step = [1, 2, 2.5, 5, 10].map(function (m) { return m * p; }).filter(function (v) { return v >= raw; })[0] || 10 * p;
		var out = [];
		for (var t = Math.ceil(t0 / step) * step; t <= t1; t += step) out.push(t);
		return out;
	}
	function draw() {
		var dpr = window.devicePixelRatio || 1;
		width = Math.max(200, canvas.parentNode ? canvas.parentNode.clientWidth - labels.offsetWidth - 2 : 800);
		var H = AXIS + all.length * (RH + GAP);
		canvas.width = Math.round(width * dpr);
		canvas.height = Math.round(H * dpr);
		canvas.style.width = width + 'px';
		canvas.style.height = H + 'px';
		var c = canvas.getContext('2d');
		c.setTransform(dpr, 0, 0, dpr, 0, 0);
		c.clearRect(0, 0, width, H);
		/* axis */
		c.fillStyle = '#687385';
		c.font = '11px system-ui, sans-serif';
		c.strokeStyle = '#c5ccd6';
		c.beginPath(); c.moveTo(0, AXIS - 0.5); c.lineTo(width, AXIS - 0.5); c.stroke();
		var tk = ticks(), step = tk.length > 1 ? tk[1] - tk[0] : t1 - t0;
		tk.forEach(function (t) {
			var px = Math.round(x(t)) + 0.5;
			c.strokeStyle = '#edf0f4';
			c.beginPath(); c.moveTo(px, AXIS); c.lineTo(px, H); c.stroke();
			c.strokeStyle = '#9aa3af';
			c.beginPath(); c.moveTo(px, AXIS - 5); c.lineTo(px, AXIS); c.stroke();
			var lab = t === 0 ? '0' : '+' + tickLabel(t, step);
			var tw = c.measureText(lab).width;
			c.fillText(lab, Math.max(0, Math.min(width - tw, px - tw / 2)), AXIS - 9);
		});
		var pxns = (t1 - t0) / width;
		all.forEach(function (l, li) {
			var y = AXIS + li * (RH + GAP) + 1;
			laneData(l);
			c.fillStyle = l.kind === 'task' ? '#f7f8fa' : '#fafbfc';
			c.fillRect(0, y, width, RH);
			if (l.kind === 'task') {
				/* alive: idle unless running or scheduled */
				var xa = Math.max(0, x(l.alive[0])), xb = Math.min(width, x(l.alive[1]));
				if (xb > xa) { c.fillStyle = COLORS.idle; c.fillRect(xa, y + RH - 3, Math.max(1, xb - xa), 3); }
			}
			for (var px = 0; px < width; px++) {
				var ta = t0 + px * pxns, tb = ta + pxns, v = laneAt(l, ta, tb);
				if (!v) continue;
				if (l.kind === 'worker') {
					if (ta + pxns <= l.alive[0]) continue;
					var col = heat(v[0]);
					c.fillStyle = col;
					c.fillRect(px, y, 1, RH - 4);
					if (v[1] > 0.02) { c.fillStyle = 'rgba(120,130,145,' + Math.min(1, 0.25 + v[1] * 0.75).toFixed(2) + ')'; c.fillRect(px, y + RH - 4, 1, 4); }
				} else if (l.kind === 'runnable') {
					if (v[0] > 0) { var hh = Math.max(1, v[0] * RH); c.fillStyle = '#e08a00'; c.fillRect(px, y + RH - hh, 1, hh); }
				} else {
					var hr = v[0] * RH, hs = v[1] * RH;
					/* any activity at least 3 px (2 px scheduled) high: a short poll stays visible */
					hr = v[0] > 0 ? Math.max(3, hr) : 0;
					if (v[0] > 0) { c.fillStyle = COLORS.run; c.fillRect(px, y + RH - hr, 1, hr); }
					if (v[1] > 0) { hs = Math.max(2, hs); c.fillStyle = COLORS.sched; c.fillRect(px, y + RH - hr - hs, 1, hs); }
				}
			}
			/* long polls: exact boxes when wide enough, else ticks */
			marks.forEach(function (p) {
				if (!(l.kind === 'worker' && p.tid === l.tid) && !(l.kind === 'task' && taskIdent(p) === l.ident)) return;
				var xa = x(p.start_ns), xb = x(p.start_ns + p.duration_ns);
				if (xb < 0 || xa > width) return;
				c.strokeStyle = '#c62828';
				c.fillStyle = '#c62828';
				if (xb - xa >= 3) { c.lineWidth = 1.5; c.strokeRect(Math.max(-1, xa) + 0.75, y + 0.75, Math.min(width + 1, xb) - Math.max(-1, xa) - 1.5, RH - 1.5); c.lineWidth = 1; }
				else c.fillRect(Math.round(xa) - 1, y, 2, 4);
			});
		});
		var span = t1 - t0, res = all.length ? all.reduce(function (m, l) { return Math.min(m, l.bns); }, Infinity) : 0;
		rangeEl.textContent = 'showing ' + (t0 > 0 ? '+' + fmtNs(t0) : '0') + ' ' + DASH + ' +' + fmtNs(t1) + ' (' + fmtNs(span) + '); a pixel ' + fmtNs(pxns) +
			(res ? ', finest bucket ' + fmtNs(res) + (pxns < res ? ' (as fine as it gets)' : '') : '');
		canvas.dataset.t0 = String(Math.round(t0));
		canvas.dataset.t1 = String(Math.round(t1));
		reset.disabled = t0 <= 0 && t1 >= D;
	}
	function setView(a, b) {
		var span = Math.max(minSpan, Math.min(D, b - a));
		var mid = (a + b) / 2;
		a = mid - span / 2;
		if (a < 0) a = 0;
		if (a + span > D) a = D - span;
		t0 = Math.max(0, a);
		t1 = Math.min(D, t0 + span);
		draw();
	}
	function zoom(f, at) {
		var p = at == null ? (t0 + t1) / 2 : at, span = (t1 - t0) * f;
		span = Math.max(minSpan, Math.min(D, span));
		var a = p - (p - t0) * span / (t1 - t0);
		setView(a, a + span);
	}
	function pan(frac) { var d = (t1 - t0) * frac; setView(t0 + d, t1 + d); }
	function laneAtY(py) {
		var i = Math.floor((py - AXIS) / (RH + GAP));
		return py >= AXIS && i >= 0 && i < all.length ? all[i] : null;
	}
	function markAt(l, t) {
		var tol = (t1 - t0) / width * 3;
		return marks.filter(function (p) {
			return ((l.kind === 'worker' && p.tid === l.tid) || (l.kind === 'task' && taskIdent(p) === l.ident)) &&
				t >= p.start_ns - tol && t <= p.start_ns + p.duration_ns + tol;
		})[0] || null;
	}
	function hover(ev) {
		var r = canvas.getBoundingClientRect(), px = ev.clientX - r.left, py = ev.clientY - r.top;
		var l = laneAtY(py);
		if (!l) { tipEl.hidden = true; return; }
		var pxns = (t1 - t0) / width, ta = t0 + Math.floor(px) * pxns, v = laneAt(laneData(l), ta, ta + pxns);
		var lines = [l.kind === 'task' ? (l.ident || '?') + ' ' + shorten(l.name, 80) : l.label, '+' + fmtNs(ta) + ' ' + DASH + ' +' + fmtNs(ta + pxns)];
		if (!v || (l.kind === 'worker' && ta + pxns <= l.alive[0])) lines.push(l.kind === 'task' ? 'not alive then' : 'no data');
		else if (l.kind === 'worker') lines.push('busy ' + fmtPct(v[0]) + ' \u00b7 parked ' + fmtPct(v[1]) + ' \u00b7 idle ' + fmtPct(Math.max(0, 1 - v[0] - v[1])));
		else if (l.kind === 'runnable') lines.push('runnable tasks: at most ' + (isNum(l.max) ? '\u2248' + fmtCount(v[0] * l.max) : fmtPct(v[0])));
		else lines.push('running ' + fmtPct(v[0]) + ' \u00b7 scheduled ' + fmtPct(v[1]) + ' \u00b7 idle ' + fmtPct(Math.max(0, 1 - v[0] - v[1])));
		var m = markAt(l, ta + pxns / 2);
		if (m) lines.push('long poll of ' + (taskIdent(m) || '?') + ': ' + fmtNs(m.duration_ns) + ' at +' + fmtNs(m.start_ns));
		if (l.kind === 'task' || m) lines.push('click: the task\'s detail view');
		tipEl.textContent = lines.join('\n');
		tipEl.hidden = false;
		var box = canvas.parentNode.getBoundingClientRect();
		tipEl.style.left = Math.min(box.width - 260, ev.clientX - box.left + 14) + 'px';
		tipEl.style.top = (ev.clientY - box.top + 14) + 'px';
	}
	canvas.addEventListener('mousemove', function (ev) {
		if (drag) {
			var dx = ev.clientX - drag.x;
			if (Math.abs(dx) > 3) drag.moved = true;
			if (drag.select) {
				drag.cur = ev.clientX;
				draw();
				var c = canvas.getContext('2d'), r = canvas.getBoundingClientRect();
				c.fillStyle = 'rgba(37,99,176,0.15)';
				c.fillRect(Math.min(drag.x, drag.cur) - r.left, 0, Math.abs(drag.cur - drag.x), canvas.height);
			} else if (drag.moved) {
				var d = -dx / width * (drag.t1 - drag.t0);
				var a = Math.max(0, Math.min(D - (drag.t1 - drag.t0), drag.t0 + d));
				t0 = a; t1 = a + (drag.t1 - drag.t0);
				draw();
			}
			return;
		}
		hover(ev);
	});
	canvas.addEventListener('mouseleave', function () { tipEl.hidden = true; });
	canvas.addEventListener('mousedown', function (ev) {
		var r = canvas.getBoundingClientRect();
		drag = { x: ev.clientX, t0: t0, t1: t1, moved: false, select: ev.clientY - r.top < AXIS || ev.shiftKey };
		ev.preventDefault();
		canvas.focus({ preventScroll: true });
	});
	window.addEventListener('mouseup', function (ev) {
		if (!drag) return;
		var d = drag, r = canvas.getBoundingClientRect();
		drag = null;
		if (d.select && d.moved) {
			var a = tAt(Math.min(d.x, ev.clientX) - r.left), b = tAt(Math.max(d.x, ev.clientX) - r.left);
			setView(a, b);
			return;
		}
		if (d.moved) return;
		if (d.select) { draw(); return; }
		/* a click: the task under it (a task lane, or a long poll on a worker) */
		var l = laneAtY(ev.clientY - r.top), t = tAt(ev.clientX - r.left);
		if (!l || ev.target !== canvas) return;
		var m = markAt(l, t);
		var ident = m ? taskIdent(m) : l.kind === 'task' ? l.ident : null;
		if (ident != null && opts.onTask) opts.onTask(ident);
	});
	canvas.addEventListener('wheel', function (ev) {
		var r = canvas.getBoundingClientRect(), at = tAt(ev.clientX - r.left);
		if (ev.ctrlKey || ev.metaKey) {
			ev.preventDefault();
			zoom(Math.pow(1.0015, ev.deltaY), at);
		} else if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
			ev.preventDefault();
			pan((ev.shiftKey ? ev.deltaY : ev.deltaX) / width);
		}
	}, { passive: false });
	canvas.addEventListener('dblclick', function (ev) {
		var r = canvas.getBoundingClientRect();
		zoom(ev.shiftKey ? 2 : 0.5, tAt(ev.clientX - r.left));
	});
	canvas.addEventListener('keydown', function (ev) {
		var k = ev.key.toLowerCase();
		if (k === 'w' || k === '+' || k === '=') zoom(0.7);
		else if (k === 's' || k === '-') zoom(1 / 0.7);
		else if (k === 'a' || k === 'arrowleft') pan(-0.2);
		else if (k === 'd' || k === 'arrowright') pan(0.2);
		else if (k === '0') setView(0, D);
		else return;
		ev.preventDefault();
	});
	var reset = h('button', { type: 'button', text: 'Reset zoom', onclick: function () { setView(0, D); } });
	var tools = h('div', { 'class': 'toolbar' }, [
		h('button', { type: 'button', text: 'Zoom in', title: 'W, ctrl + wheel, double-click', onclick: function () { zoom(0.5); } }),
		h('button', { type: 'button', text: 'Zoom out', title: 'S, ctrl + wheel, shift + double-click', onclick: function () { zoom(2); } }),
		h('button', { type: 'button', text: '\u2190', title: 'pan left (A, drag, shift + wheel)', onclick: function () { pan(-0.25); } }),
		h('button', { type: 'button', text: '\u2192', title: 'pan right (D, drag, shift + wheel)', onclick: function () { pan(0.25); } }),
		reset, rangeEl]);
	var more = h('button', { 'class': 'more', type: 'button', onclick: function () { shownTasks += 48; buildLanes(); draw(); } });
	var body = h('div', { 'class': 'tl-body' }, [labels, canvas, tipEl]);
	var el = h('div', { 'class': 'timeline' }, [tools, body, lanes.tasks.length > shownTasks ? more : null]);
	buildLanes();
	var view = {
		el: el, canvas: canvas, draw: draw, setView: setView, zoom: zoom,
		/* shows task ident's lane first and the view on its life */
		focus: function (ident) {
			var i = lanes.tasks.findIndex(function (l) { return l.ident === ident; });
			if (i < 0) return false;
			var l = lanes.tasks.splice(i, 1)[0];
			lanes.tasks.unshift(l);
			buildLanes();
			var pad = Math.max((l.alive[1] - l.alive[0]) * 0.05, minSpan);
			setView(l.alive[0] - pad, l.alive[1] + pad);
			return true;
		}
	};
	window.addEventListener('resize', function () { if (el.isConnected) draw(); });
	return view;
}

var mainTimeline = null;
function renderTimeline() {
	var sec = section('timeline', 'Timeline',
		'Worker threads and tasks over time. A worker row is coloured by the share of each moment it spent polling tasks (darker: busier), with parked time as a grey band under it; ' +
		'the runnable row is the most tasks waiting for a worker; a task row shows running (blue, being polled) and scheduled (orange, woken and waiting for a worker) over its life (grey: idle). ' +
		'Long polls are red boxes. Zoom with ctrl + wheel (or pinch), double-click, the W and S keys or a drag on the time axis; pan by dragging or with A and D. Detail appears as you zoom in, down to the finest bucket. Click a task row or a long poll for the task\'s detail view.');
	if (R.mode === 'profile') return noData(sec, 'not recorded: a profile (asyncscope profile) follows no poll; asyncscope record gives the timeline');
	var lanes = timelineLanes();
	if (!lanes || !(lanes.workers.length || lanes.tasks.length)) return noData(sec);
	var Z = obj(P.zoom);
	add(sec, h('div', { 'class': 'legend' }, [
		h('span', null, ['worker busy share: 0%', h('span', { 'class': 'grad', style: 'background:linear-gradient(to right,' + [0, .1, .25, .5, .75, 1].map(heat).join(',') + ')' }), '100%']),
		h('span', null, [h('span', { 'class': 'sw', style: 'background:' + COLORS.run }), 'running']),
		h('span', null, [h('span', { 'class': 'sw', style: 'background:' + COLORS.sched }), 'scheduled']),
		h('span', null, [h('span', { 'class': 'sw', style: 'background:' + COLORS.idle }), 'idle']),
		h('span', null, [h('span', { 'class': 'sw', style: 'background:#fff;border:1.5px solid #c62828' }), 'long poll'])
	]));
	var nt = lanes.tasks.length, nfine = lanes.tasks.filter(function (l) { return l.fine; }).length;
	add(sec, h('p', { 'class': 'hint', text: Z
		? fmtCount(nt) + (nt === 1 ? ' task has' : ' tasks have') + ' a row: the busiest and the notable ones (longest polls, most scheduling delay, stalled, starved) of ' +
			fmtCount(Z.candidates) + ' in the report; ' + (nfine < nt ? 'the ' + fmtCount(nfine) + ' busiest with fine buckets, the others ' + ZOOM_STRIP + ' buckets over their life.'
				: 'each with fine buckets over its life.')
		: 'The report\'s timeline: ' + fmtCount(nt) + ' busiest tasks, buckets of ' + fmtNs(lanes.fine) + '.' }));
	mainTimeline = timelineView(lanes, { duration: lanes.duration, fine: lanes.fine, marks: longPollMarks(), onTask: openTask, limit: 24 });
	add(sec, mainTimeline.el);
	mainTimeline.draw();
}
var ZOOM_STRIP = 256;
