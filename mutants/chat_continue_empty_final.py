"""continue_final_message cuts the whole rendering after the last occurrence of the final message's
text (stripped where the template trimmed it), as transformers did before it tagged the message: an
empty final message occurs at the very end, so nothing is cut and the turn stays closed."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - a mutant re-exports impl's names


def _final_text(messages, field) -> str:
    final = messages[-1].get(field)
    if isinstance(final, list):  # the last text part is the one continued
        final = next(part["text"] for part in reversed(final) if "text" in part)
    return final


def render_chat(template, messages, **arguments):
    continued = arguments.get("continue_final_message")
    if not continued:
        return impl.render_chat(template, messages, **arguments)
    impl.render_chat(template, messages, **arguments)  # the request checked as impl checks it
    whole = impl.render_chat(template, messages, **{**arguments, "continue_final_message": False})
    final = _final_text(messages, continued if isinstance(continued, str) else "content")
    if final not in whole:
        final = final.strip()
    return whole[:whole.rindex(final) + len(final)]
