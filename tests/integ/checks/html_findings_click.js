/* Run by html_cdp.py --eval on the page of tests/data/html/findings-report.json
 * (html_findings.case): the findings come first in the page, most severe
 * first; a finding's task link opens that task's detail view, which lists
 * the finding too. Returns "ok" or "FAIL: ...". */
(function () {
	var bad = [];
	function check(ok, what) { if (!ok) bad.push(what); return ok; }
	var first = document.querySelector('#app > section');
	check(first && first.id === 'findings', 'first section: ' + (first && first.id));
	var sev = Array.prototype.map.call(document.querySelectorAll('#findings .finding'), function (f) { return f.className.replace('finding sev-', ''); });
	check(sev.join(',') === 'error,error,warning,warning,info', 'order: ' + sev.join(','));
	var link = document.querySelector('#findings .finding.sev-error a.tlink');
	check(link && link.textContent === '#12', 'first link: ' + (link && link.textContent));
	link.click();
	return new Promise(function (r) { setTimeout(r, 150); }).then(function () {
		var d = document.getElementById('task-detail');
		if (check(d && !d.hidden && d.dataset.task === '#12', 'detail of ' + (d && d.dataset.task))) {
			check(d.querySelector('.dname').textContent === 'server::compress_blocking', 'detail name');
			check(d.querySelectorAll('.finding.sev-error').length === 1, 'detail: its finding');
		}
		return bad.length ? 'FAIL: ' + bad.join('; ') : 'ok';
	});
})()
