"""html_futures_lossy.py PAGE LOSSY TRUNC: writes PAGE edited as a lossy
recording would have it (17 lost events, 3 exits lost, a hostile awaited type)
and as a truncated one"""
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
lossy = page.replace('"lost_events": 0', '"lost_events": 17').replace('"exits_lost": 0', '"exits_lost": 3')
lossy = lossy.replace('"awaiting": "futures_stuck::Gate"', '"awaiting": "<img src=x onerror=document.body.dataset.pwned=1>"')
open(sys.argv[2], "w", encoding="utf-8").write(lossy)
open(sys.argv[3], "w", encoding="utf-8").write(page.replace('"truncated": false', '"truncated": true'))
