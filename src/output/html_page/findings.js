/* ---------- findings: what stands out, at the top of the page ---------- */
/* The report's "findings" (drawn only when the key is there): [{kind,
 * severity ("error"|"warning"|"info"), task ({task, id, seq, name...} or
 * null), title, detail, advice, file, line}], most severe first. */
var SEVERITY = { error: [0, 'error', 'errors'], warning: [1, 'warning', 'warnings'], info: [2, 'info', 'info'] };
function sevOf(f) { return SEVERITY[f.severity] ? f.severity : 'info'; }
function findingBlock(f) {
	var sev = sevOf(f), t = obj(f.task), ident = t ? taskIdent(t) : null, loc = fmtLoc(f.file, f.line);
	return h('div', { 'class': 'finding sev-' + sev }, [
		h('div', { 'class': 'fhd' }, [
			h('span', { 'class': 'sev', text: SEVERITY[sev][1] }),
			h('span', { 'class': 'ftitle', text: f.title != null ? String(f.title) : String(f.kind || 'finding') }),
			ident != null ? h('span', { 'class': 'ftask' }, [taskLink(ident), ' ', h('span', { 'class': 'name', title: taskName(t), text: shorten(lastSeg(taskName(t)), 60) })]) : null,
			f.kind != null ? h('span', { 'class': 'kind', text: String(f.kind) }) : null
		]),
		f.detail != null ? h('p', { 'class': 'fdetail', text: String(f.detail) }) : null,
		loc ? h('p', { 'class': 'floc', text: loc }) : null,
		f.advice != null ? h('p', { 'class': 'fadvice' }, [h('b', { text: 'What to do: ' }), String(f.advice)]) : null
	]);
}
function renderFindings() {
	var list = arr(R.findings);
	if (!list) return;
	list = list.filter(obj).map(function (f, i) { return [f, i]; })
		.sort(function (a, b) { return SEVERITY[sevOf(a[0])][0] - SEVERITY[sevOf(b[0])][0] || a[1] - b[1]; })
		.map(function (x) { return x[0]; });
	var sec = section('findings', 'Findings', 'What stands out in this trace, most severe first, each with what to do about it. Click a task for its detail view.');
	var nav = document.querySelector('nav.sections');
	if (nav) nav.insertBefore(h('a', { href: '#findings', text: 'Findings' }), nav.firstChild);
	if (!list.length) return noData(sec, 'no findings: nothing stands out in this trace');
	var n = {};
	list.forEach(function (f) { n[sevOf(f)] = (n[sevOf(f)] || 0) + 1; });
	add(sec, h('p', { 'class': 'fcount' }, ['error', 'warning', 'info'].filter(function (k) { return n[k]; }).map(function (k) {
		return h('span', { 'class': 'sev-' + k, text: fmtCount(n[k]) + ' ' + SEVERITY[k][n[k] === 1 ? 1 : 2] });
	})));
	add(sec, cutNote('findings', 'findings', 'the most severe first'));
	var box = h('div', { 'class': 'findings' }), LIMIT = 12;
	list.slice(0, LIMIT).forEach(function (f) { box.appendChild(findingBlock(f)); });
	add(sec, box);
	if (list.length > LIMIT) {
		var btn = h('button', { 'class': 'more', type: 'button', text: 'Show all ' + fmtCount(list.length) + ' findings (' + fmtCount(list.length - LIMIT) + ' more)',
			onclick: function () { list.slice(LIMIT).forEach(function (f) { box.appendChild(findingBlock(f)); }); btn.remove(); } });
		add(sec, btn);
	}
}
