"""html_section.py DOM ID: prints the rendered section with that id (sections do
not nest); fails without one"""
import re, sys
m = re.search(r'<section id="%s">(.*?)</section>' % re.escape(sys.argv[2]), open(sys.argv[1]).read(), re.S)
if not m:
    print("    no section", sys.argv[2], file=sys.stderr)
    sys.exit(1)
sys.stdout.write(m.group(1))
