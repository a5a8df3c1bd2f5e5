"""A server that renders a chat request with an empty ``bos_token`` and tokenizes the prompt it
rendered, as llama-server's /apply-template leaves out the BOS a template writes (textbound's
field run, Llama 3.1), and that gives no rendered text for a tokenized request (its prompt is
rendered and tokenized in one step): one bug, shown by the text it renders (chat/render) and by
the ids of its prompts (chat/ids, chat/sanitized_ids); transformers gives the template the
tokenizer's BOS."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names


def render_chat(template, messages, **arguments):
    return impl.render_chat(template, messages, **{**arguments, "bos_token": ""})


class Tokenizer(impl.Tokenizer):
    def apply_chat_template(self, conversation, *args, tokenize=True, **kwargs):
        if not tokenize:
            raise NotImplementedError("the server renders and tokenizes a request in one step")
        return super().apply_chat_template(conversation, *args, tokenize=True, **{**kwargs, "bos_token": ""})
