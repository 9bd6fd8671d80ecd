"""html_kernel_lossy.py PAGE LOSSY TRUNC: writes PAGE with the report's counts
edited as a lossy recording (17 lost events) and as a truncated one would have
them (the embedded JSON minified or not)"""
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
lossy = re.sub(r'"lost_events": ?0\b', '"lost_events":17', page)
open(sys.argv[2], "w", encoding="utf-8").write(lossy)
open(sys.argv[3], "w", encoding="utf-8").write(re.sub(r'"truncated": ?false', '"truncated":true', page))
