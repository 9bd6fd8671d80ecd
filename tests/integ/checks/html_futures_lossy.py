"""html_futures_lossy.py PAGE LOSSY TRUNC: writes PAGE edited as a lossy
recording would have it (17 lost events, 3 exits lost, a hostile awaited type)
and as a truncated one (the embedded JSON minified or not)"""
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
lossy = re.sub(r'"lost_events": ?0\b', '"lost_events":17', page)
lossy = re.sub(r'"exits_lost": ?0\b', '"exits_lost":3', lossy)
lossy = re.sub(r'"awaiting": ?"futures_stuck::Gate"', '"awaiting":"<img src=x onerror=document.body.dataset.pwned=1>"', lossy)
open(sys.argv[2], "w", encoding="utf-8").write(lossy)
open(sys.argv[3], "w", encoding="utf-8").write(re.sub(r'"truncated": ?false', '"truncated":true', page))
