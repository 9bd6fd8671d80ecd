/* Run by html_cdp.py --eval on the page of a large trace (html_scale.case):
 * uses the page as a person would and returns "ok" or "FAIL: what went
 * wrong". Tables: 50 rows a page, the count and the cut note exact, paging,
 * sorting and filtering; the timeline: ctrl + wheel zooms in around the
 * pointer, D pans, 0 resets, a click on a task row opens its detail view;
 * the detail view: both histograms, its own timeline, its wakers, Escape
 * closes it. */
(function () {
	var bad = [];
	function check(ok, what) { if (!ok) bad.push(what); return ok; }
	function later(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }
	function fmt(n) { return n.toLocaleString('en-US'); }
	var P = JSON.parse(document.getElementById('page').textContent);
	var R = JSON.parse(document.getElementById('data').textContent);
	var cut = P.cuts.tasks;

	/* every table shows one page at most */
	document.querySelectorAll('section tbody').forEach(function (tb) {
		check(tb.rows.length <= 50, 'a table shows ' + tb.rows.length + ' rows');
	});
	var sec = document.getElementById('tasks'), tb = sec.querySelector('tbody');
	var count = sec.querySelector('.toolbar .count');
	check(tb.rows.length === 50, 'tasks: ' + tb.rows.length + ' rows');
	check(count.textContent === 'rows 1\u201350 of ' + fmt(cut.kept) + ' tasks', 'tasks count: ' + count.textContent);
	var note = sec.querySelector('p.cut');
	check(note && note.textContent.indexOf('holds ' + fmt(cut.kept) + ' of the report\'s ' + fmt(cut.total) + ' tasks') >= 0 &&
		note.textContent.indexOf(fmt(cut.omitted.polls) + ' polls') >= 0, 'tasks cut note: ' + (note && note.textContent));
	check(R.tasks.length === cut.kept, 'page rows ' + R.tasks.length);
	/* paging */
	var first = tb.rows[0].cells[0].textContent;
	sec.querySelector('.pager button[title="next page"]').click();
	check(count.textContent === 'rows 51\u2013100 of ' + fmt(cut.kept) + ' tasks', 'page 2 count: ' + count.textContent);
	check(tb.rows[0].cells[0].textContent !== first, 'page 2 shows page 1');
	sec.querySelector('.pager button[title="last page"]').click();
	check(/^rows 951\u20131,000 of /.test(count.textContent), 'last page: ' + count.textContent);
	/* sort by polls, most first */
	var th = Array.prototype.filter.call(sec.querySelectorAll('th'), function (t) { return t.firstChild.textContent === 'polls'; })[0];
	th.click();
	var polls = Array.prototype.map.call(tb.rows, function (r) { return +r.cells[3].textContent.replace(/,/g, ''); });
	var most = Math.max.apply(null, R.tasks.map(function (t) { return t.polls; }));
	check(count.textContent.indexOf('rows 1\u201350 ') === 0 && polls[0] === most, 'sort by polls: first ' + polls[0] + ', most ' + most);
	check(polls.every(function (v, i) { return !i || v <= polls[i - 1]; }), 'sort by polls: not in order');
	/* filter by a task's identity */
	var ident = tb.rows[3].cells[0].textContent, input = sec.querySelector('input[type=search]');
	input.value = ident;
	input.dispatchEvent(new Event('input'));
	check(tb.rows.length >= 1 && Array.prototype.every.call(tb.rows, function (r) { return r.textContent.indexOf(ident) >= 0; }),
		'filter ' + ident + ': ' + count.textContent);
	input.value = '';
	input.dispatchEvent(new Event('input'));

	/* the timeline, in view */
	var cv = document.querySelector('#timeline canvas.tl');
	cv.scrollIntoView();
	var r = cv.getBoundingClientRect();
	var span0 = cv.dataset.t1 - cv.dataset.t0, dur = +cv.dataset.t1;
	for (var i = 0; i < 6; i++)
		cv.dispatchEvent(new WheelEvent('wheel', { deltaY: -400, ctrlKey: true, clientX: r.left + r.width / 2, clientY: r.top + 30, bubbles: true, cancelable: true }));
	var span1 = cv.dataset.t1 - cv.dataset.t0;
	check(span1 < span0 / 20 && span1 > span0 / 40, 'zoom: span ' + span0 + ' -> ' + span1);
	var t0 = +cv.dataset.t0;
	cv.dispatchEvent(new KeyboardEvent('keydown', { key: 'd', bubbles: true }));
	check(+cv.dataset.t0 > t0, 'pan: t0 ' + t0 + ' -> ' + cv.dataset.t0);
	var label = document.querySelector('#timeline .timeline .count').textContent;
	check(/^showing \+/.test(label), 'range label: ' + label);
	cv.dispatchEvent(new KeyboardEvent('keydown', { key: '0', bubbles: true }));
	check(+cv.dataset.t0 === 0 && +cv.dataset.t1 === dur, 'reset: ' + cv.dataset.t0 + ' ' + cv.dataset.t1);
	/* a click on the first task row opens its detail view */
	var lbl = document.querySelector('#timeline .tl-lbl.task'), lr = lbl.getBoundingClientRect(), want = lbl.querySelector('a').textContent;
	var at = { clientX: r.left + r.width / 2, clientY: lr.top + lr.height / 2, bubbles: true };
	cv.dispatchEvent(new MouseEvent('mousedown', at));
	cv.dispatchEvent(new MouseEvent('mouseup', at));
	return later(150).then(function () {
		var d = document.getElementById('task-detail');
		if (!check(d && !d.hidden && d.dataset.task === want, 'timeline click: detail of ' + (d && d.dataset.task) + ', not ' + want))
			return;
		var hists = d.querySelectorAll('.hist svg');
		check(hists.length === 2, 'detail: ' + hists.length + ' histograms');
		var z = P.zoom.tasks.filter(function (t) { return t.task === want; })[0];
		var row = R.tasks.filter(function (t) { return t.task === want; })[0];
		check(z && row && z.sched.count > 0 && z.poll.count <= row.polls, 'detail data of ' + want);
		check(d.querySelector('canvas.tl'), 'detail: no timeline');
		check(Array.prototype.some.call(d.querySelectorAll('h3'), function (h) { return h.textContent === 'Woken by'; }), 'detail: no wakers');
		document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
		check(d.hidden && location.hash === '', 'Escape: the detail view stays');
	}).then(function () {
		return bad.length ? 'FAIL: ' + bad.join('; ') : 'ok';
	});
})()
