"""Judges: the protocol, the in-process llama.cpp judge and the HTTP judge."""

from localeval.judge.base import Judge, JudgeReply, JudgeRequest, Message, Usage

__all__ = ["Judge", "JudgeReply", "JudgeRequest", "Message", "Usage"]
