"""The template is given an empty ``bos_token``, so a template writing it renders none, as
llama-server's `/apply-template` leaves out the BOS (its tokenizer adds it again; textbound's field
run, Llama 3.1); transformers gives the template the tokenizer's BOS."""
from textbound import impl
from textbound.impl import *  # noqa: F403 - re-exports impl's names


def render_chat(template, messages, **arguments):
    return impl.render_chat(template, messages, **{**arguments, "bos_token": ""} if "bos_token" in arguments
                            else arguments)
