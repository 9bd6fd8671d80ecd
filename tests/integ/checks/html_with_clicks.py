"""html_with_clicks.py PAGE OUT: PAGE with a script run after the report's that
uses the blocking flame graph as a person would: clicks the nanosleep frame
(zoom), types "nanosleep" into the highlight box, clicks Reset zoom; it writes
what it saw into body[data-clicks] ("ok" or what went wrong). A script error
there counts as a page error (html-check.sh fails)"""
import sys
js = r"""<script>
(function () {
	var sec = document.getElementById('blocking'), res = [];
	var flame = sec && sec.querySelector('.flame');
	if (!flame) { document.body.dataset.clicks = 'no flame graph'; return; }
	var crumbs = flame.querySelector('.crumbs'), bar = flame.previousElementSibling;
	var target = null;
	flame.querySelectorAll('g.fr').forEach(function (g) {
		var t = g.querySelector('title');
		if (t && /^(do_nanosleep|hrtimer_nanosleep)\n/.test(t.textContent)) target = target || g;
	});
	if (!target) { document.body.dataset.clicks = 'no nanosleep frame'; return; }
	target.dispatchEvent(new MouseEvent('click', { bubbles: true }));
	if (!/nanosleep/.test(crumbs.textContent)) res.push('zoom: ' + crumbs.textContent);
	if (bar.querySelector('button').disabled) res.push('zoom: Reset zoom still disabled');
	if (flame.querySelectorAll('g.anc').length < 2) res.push('zoom: callers not kept above');
	var input = bar.querySelector('input');
	input.value = 'nanosleep';
	input.dispatchEvent(new Event('input'));
	var hl = /^highlighted: .*\(([0-9.]+)% of all\)$/.exec(bar.querySelector('.count').textContent);
	if (!hl || +hl[1] < 90) res.push('search: ' + bar.querySelector('.count').textContent);
	bar.querySelector('button').click();
	if (!/^all stacks: /.test(crumbs.textContent) || flame.querySelectorAll('g.anc').length) res.push('reset: ' + crumbs.textContent);
	document.body.dataset.clicks = res.length ? res.join('; ') : 'ok';
})();
</script>
</body>"""
page = open(sys.argv[1], encoding="utf-8").read()
open(sys.argv[2], "w", encoding="utf-8").write(page.replace("</body>", js, 1))
