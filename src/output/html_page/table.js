/* ---------- tables: sorted, filtered, paged ---------- */
/* What the page kept of the report's array at path (the page block's
 * "cuts", src/output/html_bound.c): {total, kept, omitted: {key: sum}}, or
 * null when the array is whole. */
function cutOf(path) {
	var c = obj(P.cuts) && obj(P.cuts[path]);
	return c && isNum(c.total) && isNum(c.kept) && c.total > c.kept ? c : null;
}
/* One line saying what the page left out of the array at path, or null:
 * "The page holds 1,000 of the report's 11,002 tasks (WHY); the 10,002
 * left out: 182,307 polls, 2.28 s busy." sums: [[key, label, fmt]]. */
function cutNote(path, noun, why, sums) {
	var c = cutOf(path);
	if (!c) return null;
	var om = obj(c.omitted) || {}, parts = [];
	(sums || []).forEach(function (x) {
		if (isNum(om[x[0]])) parts.push((x[2] || fmtCount)(om[x[0]]) + ' ' + x[1]);
	});
	return h('p', { 'class': 'cut', text: 'The page holds ' + fmtCount(c.kept) + ' of the report\'s ' + fmtCount(c.total) + ' ' + noun +
		(why ? ' (' + why + ')' : '') + '; the ' + fmtCount(c.total - c.kept) + ' left out' +
		(parts.length ? ': ' + parts.join(', ') : '') + '.' });
}

/* A link opening a task's detail view (#task=IDENT). */
function taskLink(ident, text) {
	if (ident == null) return null;
	return h('a', { 'class': 'tlink', href: '#task=' + encodeURIComponent(ident), title: 'open the task\'s detail view',
		text: text != null ? text : ident });
}

var PAGE_SIZES = [25, 50, 100, 250];
/* A table of rows, PAGE_SIZES[1] a page. cols: [{label, get(row), fmt(value,
 * row) -> node|string, num, cls, title(row)}]; opts: {sort: column index,
 * desc, rowClass(row), noun, cut: [path, why, sums] (cutNote), pageSize}.
 * Click a header to sort (again: the other way), type in the filter box to
 * keep the rows any cell of which holds the text; the count says which rows
 * are shown: "rows 1-50 of 11,002". Returns the element. */
function table(cols, rows, opts) {
	opts = opts || {};
	var sortCol = opts.sort != null ? opts.sort : 0, desc = !!opts.desc, query = '';
	var page = 0, size = opts.pageSize || PAGE_SIZES[1], shown = [];
	var noun = opts.noun || 'rows';
	var tbody = h('tbody'), ths = [], countEl = h('span', { 'class': 'count' });
	var pager = h('span', { 'class': 'pager' });
	function text(row, c) {
		var v = c.get(row);
		return v == null ? '' : String(v).toLowerCase();
	}
	/* the filtered rows in order, recomputed on a sort or filter change only */
	function order() {
		var c = cols[sortCol], list = [];
		rows.forEach(function (r, i) {
			if (query && !cols.some(function (k) { return text(r, k).indexOf(query) >= 0; })) return;
			var v = c.get(r);
			list.push([r, v == null || v === '' ? null : v, i]);
		});
		list.sort(function (x, y) {
			var na = x[1] === null, nb = y[1] === null;
			if (na || nb) return na && nb ? x[2] - y[2] : na ? 1 : -1; /* missing values last, either way */
			var r = c.num ? x[1] - y[1] : String(x[1]).localeCompare(String(y[1]), 'en', { numeric: true });
			return (desc ? -r : r) || x[2] - y[2];
		});
		shown = list.map(function (x) { return x[0]; });
	}
	function btn(label, title, to) {
		return h('button', { type: 'button', title: title, text: label, disabled: to === null ? 'disabled' : null,
			onclick: function () { page = to; draw(); } });
	}
	function draw() {
		var pages = Math.max(1, Math.ceil(shown.length / size));
		if (page >= pages) page = pages - 1;
		while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
		var from = page * size, to = Math.min(shown.length, from + size);
		for (var i = from; i < to; i++) {
			var row = shown[i];
			var tr = h('tr', { 'class': opts.rowClass ? opts.rowClass(row) : null });
			cols.forEach(function (c) {
				var v = c.get(row), out = c.fmt ? c.fmt(v, row) : v;
				if (out == null || out === '') out = nil();
				var td = h('td', { 'class': [c.num ? 'num' : '', c.cls || ''].join(' ').trim() || null }, out);
				if (c.title) { var tt = c.title(row); if (tt) td.title = tt; }
				tr.appendChild(td);
			});
			tbody.appendChild(tr);
		}
		ths.forEach(function (th, i) {
			th.querySelector('.arrow').textContent = i === sortCol ? (desc ? '\u25be' : '\u25b4') : '';
			th.setAttribute('aria-sort', i === sortCol ? (desc ? 'descending' : 'ascending') : 'none');
		});
		var n = rows.length === 1 ? noun.replace(/s$/, '') : noun;
		countEl.textContent = !shown.length ? (rows.length ? 'no ' + noun.replace(/s$/, '') + ' matches (' + fmtCount(rows.length) + ' ' + n + ')' : 'no ' + noun)
			: 'rows ' + fmtCount(from + 1) + DASH + fmtCount(to) + ' of ' + fmtCount(shown.length) +
				(shown.length < rows.length ? ' matching (' + fmtCount(rows.length) + ' ' + n + ')' : ' ' + n);
		while (pager.firstChild) pager.removeChild(pager.firstChild);
		if (pages > 1)
			add(pager, [btn('\u00ab', 'first page', page > 0 ? 0 : null), btn('\u2039', 'previous page', page > 0 ? page - 1 : null),
				h('span', { 'class': 'pg', text: 'page ' + (page + 1) + ' of ' + pages }),
				btn('\u203a', 'next page', page < pages - 1 ? page + 1 : null), btn('\u00bb', 'last page', page < pages - 1 ? pages - 1 : null)]);
	}
	var headRow = h('tr');
	cols.forEach(function (c, i) {
		var th = h('th', { 'class': 'sortable' + (c.num ? ' num' : ''), title: 'sort by ' + c.label,
			onclick: function () {
				if (sortCol === i) desc = !desc;
				else { sortCol = i; desc = !!c.num; }
				page = 0;
				order();
				draw();
			} }, [c.label, h('span', { 'class': 'arrow' })]);
		ths.push(th);
		headRow.appendChild(th);
	});
	var wrap = h('div', { 'class': 'tablewrap' }, h('table', null, [h('thead', null, headRow), tbody]));
	var input = h('input', { type: 'search', placeholder: 'Filter ' + noun + ' (name, location, state, id...)',
		'aria-label': 'filter ' + noun, oninput: function () { query = input.value.trim().toLowerCase(); page = 0; order(); draw(); } });
	var sizeSel = h('select', { 'aria-label': 'rows a page', title: 'rows a page', onchange: function () { size = +sizeSel.value; page = 0; draw(); } },
		PAGE_SIZES.map(function (n) { return h('option', { value: n, selected: n === size ? 'selected' : null, text: n + ' a page' }); }));
	var root = h('div', { 'class': 'table' }, [h('div', { 'class': 'toolbar' }, [input, countEl, pager, rows.length > PAGE_SIZES[0] ? sizeSel : null])]);
	if (opts.cut) add(root, cutNote(opts.cut[0], noun, opts.cut[1], opts.cut[2]));
	root.appendChild(wrap);
	order();
	draw();
	return root;
}

/* Column helpers */
function colNum(label, key, fmt) {
	return { label: label, num: true, get: function (r) { return isNum(r[key]) ? r[key] : null; },
		fmt: fmt || fmtCount };
}
function colDur(label, key) { return colNum(label, key, fmtNs); }
function colId(label, key) { return colNum(label, key, fmtId); }
/* The task column: its identity (taskIdent), a link to its detail view,
 * sorted with numbers in order. */
function colTask(get) {
	return { label: 'task', cls: 'task', get: get || function (r) { return taskIdent(r); },
		fmt: function (v) { return v == null ? null : taskLink(v); },
		title: function () { return '#N: the runtime\'s task id; ~N: the task\'s number in this trace (no runtime id); 0x...: its address. Click: the task\'s detail view'; } };
}
function colName(label, key, max) {
	return { label: label, cls: 'name', get: function (r) { return r[key] != null ? String(r[key]) : null; },
		fmt: function (v) { return v == null ? null : shorten(v, max || 70); },
		title: function (r) { return r[key] != null ? String(r[key]) : null; } };
}
function colAt(label, key) { return colNum(label, key, fmtAt); }
