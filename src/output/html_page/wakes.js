/* ---------- wake graph ---------- */
/* wakers: "task", "io", "timer", "runtime", "blocking", "thread" (analysis wake_source__str()) */
var SOURCE_COLORS = { task: '#4b6fa5', io: '#2e7d32', timer: '#7b3fa0', runtime: '#8a6d3b', blocking: '#0e7c86', thread: '#b4531f' };
function srcColor(kind) { return SOURCE_COLORS[kind] || '#6b7280'; }
function srcLabel(kind) {
	return { task: 'a task', io: 'I/O driver', timer: 'timer', runtime: 'runtime (worker loop)', blocking: 'blocking task',
		thread: 'thread outside a poll' }[kind] || String(kind);
}
function lastSeg(name) {
	/* the most specific part of a Rust path, generics left out */
	var n = String(name), depth = 0, cut = 0;
	for (var i = 0; i < n.length; i++) {
		var ch = n[i];
		if (ch === '<') depth++;
		else if (ch === '>') depth--;
		else if (depth === 0 && ch === ':' && n[i + 1] === ':') cut = i + 2;
	}
	var tail = n.slice(cut);
	/* closures ({async_block#0}) say little alone: keep the segment before them */
	if (/^\{/.test(tail) && cut > 2) {
		var prev = n.slice(0, cut - 2), j = prev.lastIndexOf('::');
		tail = prev.slice(j + 2) + '::' + tail;
	}
	return tail;
}

/* A task node opens the task's detail view. */
function nodeAttrs(n) {
	return n.kind === 'task' && n.ident != null ? { 'class': 'wnode', onclick: function () { openTask(n.ident); } } : null;
}
function wakeGraph(edges) {
	var MAXE = 40;
	var drawn = edges.slice().sort(function (a, b) { return (b.count || 0) - (a.count || 0); }).slice(0, MAXE);
	var nodes = {}, order = [];
	function node(key, label, full, kind, seq) {
		if (!nodes[key]) { nodes[key] = { key: key, label: label, full: full, kind: kind, seq: seq, out: [], inn: [] }; order.push(nodes[key]); }
		return nodes[key];
	}
	drawn.forEach(function (e) {
		var fk = e.from_kind != null ? String(e.from_kind) : 'task';
		var from = fk === 'task' && e.from_seq != null
			? node('t' + e.from_seq, taskIdent(e, 'from_') + ' ' + lastSeg(taskName({ name: e.from_name })), taskIdent(e, 'from_') + ' ' + taskName({ name: e.from_name }), 'task', e.from_seq)
			: node('k' + fk, srcLabel(fk), srcLabel(fk) + ' (' + fk + ')', fk, -1);
		var to = node('t' + e.to_seq, taskIdent(e, 'to_') + ' ' + lastSeg(taskName({ name: e.to_name })), taskIdent(e, 'to_') + ' ' + taskName({ name: e.to_name }), 'task', e.to_seq);
		if (fk === 'task' && e.from_seq != null) from.ident = taskIdent(e, 'from_');
		to.ident = taskIdent(e, 'to_');
		var ed = { from: from, to: to, e: e };
		from.out.push(ed); to.inn.push(ed);
		e.__ed = ed;
	});
	/* layers: depth-first from the nodes nobody wakes (event sources first)
	 * marks the edges that close a cycle as back edges; the others form a DAG
	 * whose longest path to a node gives its column */
	order.sort(function (a, b) { return (a.kind === 'task') - (b.kind === 'task') || a.seq - b.seq; });
	var state = {}, topo = [];
	function dfs(n) {
		state[n.key] = 1;
		n.out.forEach(function (ed) {
			if (ed.to === n) { ed.self = true; return; }
			if (state[ed.to.key] === 1) { ed.back = true; return; }
			if (!state[ed.to.key]) dfs(ed.to);
		});
		state[n.key] = 2;
		topo.push(n);
	}
	order.forEach(function (n) { if (!state[n.key] && !n.inn.some(function (ed) { return ed.from !== n; })) dfs(n); });
	order.forEach(function (n) { if (!state[n.key]) dfs(n); });
	topo.reverse();
	var nLayers = 0;
	topo.forEach(function (n) {
		n.layer = 0;
		n.inn.forEach(function (ed) { if (!ed.back && !ed.self) n.layer = Math.max(n.layer, ed.from.layer + 1); });
		nLayers = Math.max(nLayers, n.layer + 1);
	});
	/* long forward edges pass through one placeholder per column they cross,
	 * so that they run between the nodes of those columns, not through them */
	var cols = [];
	for (var i = 0; i < nLayers; i++) cols.push([]);
	order.forEach(function (n) { cols[n.layer].push(n); });
	drawn.forEach(function (e) {
		var ed = e.__ed;
		ed.via = [];
		if (ed.back || ed.self) return;
		for (var l = ed.from.layer + 1; l < ed.to.layer; l++) {
			var dmy = { dummy: true, layer: l, seq: 1e9, prev: ed.via.length ? ed.via[ed.via.length - 1] : ed.from };
			ed.via.push(dmy);
			cols[l].push(dmy);
		}
	});
	var maxRows = Math.max.apply(null, cols.map(function (c) { return c.length; }));
	var maxCount = Math.max.apply(null, drawn.map(function (e) { return e.count || 1; }));
	function width(c) { return maxCount > 1 ? 1.2 + 4.5 * Math.log(Math.max(1, c)) / Math.log(maxCount) : 2; }
	var svg, Wd, Hd;
	var arrowId = 'wake-arrow';
	var defs = s('defs', null, s('marker', { id: arrowId, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, markerUnits: 'userSpaceOnUse', orient: 'auto-start-reverse' },
		s('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#6b7280' })));

	if (nLayers <= 7 && maxRows <= 30 && order.length <= 40) {
		/* layered, left to right */
		var NW = 250, NH = maxRows > 10 ? 28 : 36, CX = 420, RY = maxRows > 10 ? 42 : 64, M = 24;
		Wd = M * 2 + (nLayers - 1) * CX + NW; Hd = M * 2 + (maxRows - 1) * RY + NH + (drawn.some(function (e) { return e.__ed.self; }) ? 30 : 0);
		/* order within a column by the mean row of what leads into it */
		cols.forEach(function (col, ci) {
			if (ci > 0) col.forEach(function (n) {
				var ys = n.dummy ? [n.prev.row] : n.inn.filter(function (ed) { return !ed.back && !ed.self; })
					.map(function (ed) { return (ed.via.length ? ed.via[ed.via.length - 1] : ed.from).row; });
				n.bary = ys.length ? ys.reduce(function (a, b) { return a + b; }, 0) / ys.length : 1e9;
			});
			if (ci > 0) col.sort(function (a, b) { return a.bary - b.bary || a.seq - b.seq; });
			var off = (maxRows - col.length) / 2;
			col.forEach(function (n, ri) { n.row = ri + off; n.x = M + ci * CX; n.y = M + (ri + off) * RY; });
		});
		/* ports: the edges leaving (entering) a node spread over its right (left) side, in the order of where they go (come from) */
		function portY(n, list, key) {
			list.sort(function (p, q) { return p[1] - q[1]; });
			list.forEach(function (p, i) { p[0][key] = n.y + NH * (0.2 + 0.5 * (i + 0.5) / list.length); });
		}
		order.forEach(function (n) {
			var outs = [], ins = [];
			n.out.forEach(function (ed) { if (!ed.back && !ed.self) outs.push([ed, (ed.via.length ? ed.via[0] : ed.to).y]); });
			n.inn.forEach(function (ed) { if (!ed.back && !ed.self) ins.push([ed, (ed.via.length ? ed.via[ed.via.length - 1] : ed.from).y]); });
			portY(n, outs, 'sy');
			portY(n, ins, 'ty');
		});
		svg = s('svg', { width: Wd, height: Hd, viewBox: '0 0 ' + Wd + ' ' + Hd, role: 'img' }, defs);
		/* edge labels: moved up or down in 12 px steps until they overlap no other label nor node */
		var boxes = order.map(function (n) { return [n.x, n.y, n.x + NW, n.y + NH]; });
		var place = function (x, y, w) {
			var tries = [0, -12, 12, -24, 24, -36, 36];
			for (var i = 0; i < tries.length; i++) {
				var bx = [x - w / 2, y + tries[i] - 10, x + w / 2, y + tries[i] + 3];
				if (!boxes.some(function (q) { return bx[0] < q[2] && q[0] < bx[2] && bx[1] < q[3] && q[1] < bx[3]; })) {
					boxes.push(bx);
					return [x, y + tries[i]];
				}
			}
			return [x, y];
		};
		var curve = function (x1, y1, x2, y2) {
			var dx = (x2 - x1) * 0.5;
			return ' C' + (x1 + dx) + ',' + y1 + ' ' + (x2 - dx) + ',' + y2 + ' ' + x2 + ',' + y2;
		};
		var edgeG = s('g'), labelG = s('g'), nodeG = s('g');
		drawn.forEach(function (e) {
			var ed = e.__ed, a = ed.from, b = ed.to, d, lx, ly;
			var label = TIMES + fmtCount(e.count) + (isNum(e.delay_p50_ns) ? ' \u00b7 p50 ' + fmtNs(e.delay_p50_ns) : '');
			if (ed.self) {
				/* a loop under the node's right end */
				var x1 = a.x + NW - 56, x2 = a.x + NW - 16, yb = a.y + NH;
				d = 'M' + x1 + ',' + yb + ' C' + (x1 - 8) + ',' + (yb + 26) + ' ' + (x2 + 8) + ',' + (yb + 26) + ' ' + x2 + ',' + (yb + 2);
				lx = a.x + NW / 2 - 40; ly = yb + 18;
			} else if (!ed.back) {
				var px = a.x + NW, py = ed.sy;
				d = 'M' + px + ',' + py;
				ed.via.forEach(function (v) {
					var vy = v.y + NH * 0.45;
					d += curve(px, py, v.x, vy) + ' L' + (v.x + NW) + ',' + vy;
					px = v.x + NW; py = vy;
				});
				d += curve(px, py, b.x, ed.ty);
				/* the label goes where the edge is alone: on its straight run through a
				 * column, else next to whichever end has fewer edges */
				var nOut = a.out.length, nIn = b.inn.length, tw = label.length * 6 + 4;
				if (ed.via.length) { lx = ed.via[0].x + NW / 2; ly = ed.via[0].y + NH * 0.45 - 5; }
				else if (nOut > nIn) { lx = b.x - 10 - tw / 2; ly = ed.ty - 4; }
				else if (nIn > nOut) { lx = a.x + NW + 8 + tw / 2; ly = ed.sy - 4; }
				else { lx = (a.x + NW + b.x) / 2; ly = (ed.sy + ed.ty) / 2 - 5; }
			} else {
				/* an edge closing a cycle runs right to left, dashed, below the forward ones */
				var qx = a.x, qy = a.y + NH * 0.85, rx = b.x + NW, ry = b.y + NH * 0.85;
				d = 'M' + qx + ',' + qy + curve(qx, qy, rx, ry);
				lx = (qx + rx) / 2; ly = (qy + ry) / 2 + 15;
			}
			var w = width(e.count || 1);
			edgeG.appendChild(s('path', { d: d, fill: 'none', stroke: srcColor(a.kind), 'stroke-opacity': 0.7, 'stroke-width': w, 'marker-end': 'url(#' + arrowId + ')',
				'stroke-dasharray': ed.back ? '6 4' : null },
				tip(a.full + ' \u2192 ' + b.full + '\n' + fmtCount(e.count) + ' wakes, delay p50 ' + fmtNs(e.delay_p50_ns) + ', p99 ' + fmtNs(e.delay_p99_ns) + ', max ' + fmtNs(e.delay_max_ns))));
			var p = place(lx, ly, label.length * 6 + 4);
			labelG.appendChild(s('text', { x: p[0], y: p[1], 'text-anchor': 'middle', 'font-size': 11, fill: '#374151', 'class': 'halo', text: label }));
		});
		order.forEach(function (n) {
			var task = n.kind === 'task';
			nodeG.appendChild(s('g', nodeAttrs(n), [
				tip(n.full),
				s('rect', { x: n.x, y: n.y, width: NW, height: NH, rx: 6, fill: task ? '#ffffff' : '#f3f7ef', stroke: srcColor(n.kind), 'stroke-width': 1.5 }),
				s('text', { x: n.x + NW / 2, y: n.y + NH / 2 + 4, 'text-anchor': 'middle', 'font-size': 12, fill: '#111827', text: shorten(n.label, 36) })
			]));
		});
		add(svg, [edgeG, nodeG, labelG]);
	} else {
		/* many nodes or long chains: a circle, sources first */
		var N = order.length, Rr = Math.max(150, Math.min(420, N * 14)), pad = 240;
		Wd = 2 * (Rr + pad); Hd = 2 * (Rr + 60);
		var cx = Wd / 2, cy = Hd / 2;
		order.forEach(function (n, i) {
			var a = -Math.PI / 2 + 2 * Math.PI * i / N;
			n.a = a; n.x = cx + Rr * Math.cos(a); n.y = cy + Rr * Math.sin(a);
		});
		svg = s('svg', { width: Wd, height: Hd, viewBox: '0 0 ' + Wd + ' ' + Hd, role: 'img' }, defs);
		var eg = s('g'), lg = s('g'), ng = s('g');
		drawn.forEach(function (e) {
			var ed = e.__ed, a = ed.from, b = ed.to, d, lx, ly;
			if (a === b) {
				var ox = Math.cos(a.a) * 34, oy = Math.sin(a.a) * 34;
				d = 'M' + (a.x - oy * 0.25) + ',' + (a.y + ox * 0.25) + ' C' + (a.x + ox - oy * 0.5) + ',' + (a.y + oy + ox * 0.5) + ' ' + (a.x + ox + oy * 0.5) + ',' + (a.y + oy - ox * 0.5) + ' ' + (a.x + oy * 0.25) + ',' + (a.y - ox * 0.25);
				lx = a.x + ox * 1.1; ly = a.y + oy * 1.1;
			} else {
				/* bowed towards the centre, more for longer chords */
				var mx = (a.x + b.x) / 2, my = (a.y + b.y) / 2, chord = Math.sqrt((b.x - a.x) * (b.x - a.x) + (b.y - a.y) * (b.y - a.y));
				var toC = Math.sqrt((cx - mx) * (cx - mx) + (cy - my) * (cy - my)) || 1, bow = Math.min(toC, chord * 0.3);
				var qx = mx + (cx - mx) / toC * bow, qy = my + (cy - my) / toC * bow;
				var dxe = b.x - qx, dye = b.y - qy, le = Math.sqrt(dxe * dxe + dye * dye) || 1;
				var tx = b.x - dxe / le * 9, ty = b.y - dye / le * 9;
				d = 'M' + a.x + ',' + a.y + ' Q' + qx + ',' + qy + ' ' + tx + ',' + ty;
				lx = 0.25 * a.x + 0.5 * qx + 0.25 * tx; ly = 0.25 * a.y + 0.5 * qy + 0.25 * ty;
			}
			eg.appendChild(s('path', { d: d, fill: 'none', stroke: srcColor(a.kind), 'stroke-opacity': 0.6, 'stroke-width': width(e.count || 1), 'marker-end': 'url(#' + arrowId + ')' },
				tip(a.full + ' \u2192 ' + b.full + '\n' + fmtCount(e.count) + ' wakes, delay p50 ' + fmtNs(e.delay_p50_ns))));
			if (drawn.length <= 24)
				lg.appendChild(s('text', { x: lx, y: ly, 'text-anchor': 'middle', 'font-size': 10, fill: '#374151', 'class': 'halo', text: TIMES + fmtCount(e.count) }));
		});
		order.forEach(function (n) {
			var right = Math.cos(n.a) >= 0, lx = n.x + Math.cos(n.a) * 14, ly = n.y + Math.sin(n.a) * 14 + 4;
			ng.appendChild(s('g', nodeAttrs(n), [tip(n.full),
				s('circle', { cx: n.x, cy: n.y, r: 7, fill: n.kind === 'task' ? '#fff' : srcColor(n.kind), stroke: srcColor(n.kind), 'stroke-width': 2 }),
				s('text', { x: lx, y: ly, 'text-anchor': right ? 'start' : 'end', 'font-size': 11, fill: '#111827', text: shorten(n.label, 30) })]));
		});
		add(svg, [eg, ng, lg]);
	}
	/* shrink to the page's width, down to 75%; wider graphs scroll */
	svg.style.minWidth = Math.round(Wd * 0.75) + 'px';
	return { svg: svg, drawn: drawn.length };
}

function renderWakes() {
	var sec = section('wakes', 'Wake graph', 'Who wakes whom: an arrow from the waker (a task, the I/O driver, a timer) to the task it woke; width by number of wakes, labelled with the count and the median delay from wake to poll. Click a task for its detail view.');
	var edges = arr(R.wake_edges);
	if (!edges) return noData(sec, null, 'wake_edges');
	edges = edges.filter(function (e) { return obj(e) && e.to_seq != null; });
	if (!edges.length) return noData(sec, 'no wakes in this report');
	var kinds = {};
	edges.forEach(function (e) { kinds[e.from_kind != null ? String(e.from_kind) : 'task'] = true; });
	add(sec, h('div', { 'class': 'legend' }, Object.keys(kinds).sort().map(function (k) {
		return h('span', null, [h('span', { 'class': 'sw', style: 'background:' + srcColor(k) }), 'woken by ' + srcLabel(k)]);
	})));
	var g = wakeGraph(edges);
	add(sec, h('div', { 'class': 'graphwrap' }, g.svg));
	if (g.drawn < edges.length) add(sec, h('p', { 'class': 'hint', text: 'The graph shows the ' + g.drawn + ' most frequent of ' + fmtCount(edges.length) + ' edges; the table lists them all.' }));
	function end(e, which) {
		var k = e[which + '_kind'] != null ? String(e[which + '_kind']) : 'task';
		return which === 'to' || k === 'task' ? [taskIdent(e, which + '_'), taskName({ name: e[which + '_name'] })] : [null, srcLabel(k)];
	}
	function endCol(label, which) {
		return { label: label, cls: 'name', get: function (e) { var x = end(e, which); return (x[0] != null ? x[0] + ' ' : '') + x[1]; },
			fmt: function (v, e) { var x = end(e, which); return x[0] != null ? h('span', null, [taskLink(x[0]), ' ', shorten(x[1], 60)]) : x[1]; },
			title: function (e) { return end(e, which)[1]; } };
	}
	add(sec, table([endCol('from', 'from'), endCol('to', 'to'),
		colNum('wakes', 'count'), colDur('delay p50', 'delay_p50_ns'), colDur('delay p99', 'delay_p99_ns'), colDur('delay max', 'delay_max_ns')
	], edges, { sort: 2, desc: true, noun: 'edges', cut: ['wake_edges', 'the most frequent, and up to 8 each way of each detailed task', [['count', 'wakes']]] }));
}
