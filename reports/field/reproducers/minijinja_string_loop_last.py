"""MiniJinja's loop over a string: loop.last is never true and loop.length is undefined, so the common
`{% if not loop.last %}, {% endif %}` writes a separator after the last character (vLLM's
tool_chat_template_toolace.jinja does this over tool-call arguments given as JSON text).

Needs: minijinja (3.1.0, the Python binding) and jinja2 (the reference, 3.1.6). Runs anywhere;
exits 1 while the bug is there, 0 once it is fixed.

The reference: jinja2's LoopContext, whose `last` and `length` are known for any iterable
(for a string: its characters).
"""
import sys

import jinja2
import minijinja

TEMPLATE = "{% for c in s %}{{ c }}{% if not loop.last %},{% endif %}{% endfor %}|{% for c in s %}{{ loop.length }}{% endfor %}"
CONTEXT = {"s": "ab"}

expected = jinja2.Environment().from_string(TEMPLATE).render(**CONTEXT)
actual = minijinja.Environment().render_str(TEMPLATE, **CONTEXT)
print("expected:", repr(expected), f"(jinja2 {jinja2.__version__})")
print("actual:  ", repr(actual))
sys.exit(1 if actual != expected else 0)
