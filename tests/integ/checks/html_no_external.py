"""html_no_external.py PAGE: nothing outside the data blocks refers to the
network"""
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
rest = re.sub(r'(<script type="application/json" id="(?:data|kernel)">).*?(</script>)', r'\1\2', page, flags=re.S)
bad = re.findall(r'(?:https?:|//cdn|src=|@import|url\((?!#))', rest)
if bad:
    print("    external references:", bad[:5], file=sys.stderr)
sys.exit(1 if bad else 0)
