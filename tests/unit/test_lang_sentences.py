"""Sentence splitting (context_relevancy counts sentences) for en / ja / zh."""

from __future__ import annotations

from localeval.lang import detect_lang, split_sentences


def test_english_abbreviations_and_newlines():
    text = "Dr. Smith went to Washington. He met the U.S. president.\nThen he left!"
    assert split_sentences(text, "en") == [
        "Dr. Smith went to Washington.", "He met the U.S. president.", "Then he left!"]


def test_japanese_keeps_quoted_sentence_together():
    text = "彼は「こんにちは。」と言った。それから帰った！本当？はい。"
    assert split_sentences(text, "ja") == [
        "彼は「こんにちは。」と言った。", "それから帰った！", "本当？", "はい。"]


def test_chinese_closing_quotes_stay_with_their_sentence():
    text = "他说：“你好。”然后走了。爱因斯坦于1879年出生在德国！真的吗？“是的！”她回答。"
    assert split_sentences(text, "zh") == [
        "他说：“你好。”", "然后走了。", "爱因斯坦于1879年出生在德国！", "真的吗？", "“是的！”", "她回答。"]
    assert split_sentences("他说：“你好。”\n然后走了。", "zh") == ["他说：“你好。”", "然后走了。"]


def test_japanese_double_corner_quotes():
    # pysbd handles 「」 but splits inside 『』; the quote continues the sentence
    assert split_sentences("『本当か？』と聞いた。そうだ。", "ja") == ["『本当か？』と聞いた。", "そうだ。"]
    assert split_sentences("『本当だ。』と言った。", "ja") == ["『本当だ。』と言った。"]


def test_empty_and_unknown_language():
    assert split_sentences("", "en") == [] and split_sentences("  \n ", "zh") == []
    assert split_sentences("One. Two.", "fr") == ["One.", "Two."]  # falls back to English rules


def test_existing_detection_untouched():
    assert detect_lang("爱因斯坦") == "zh" and detect_lang("こんにちは") == "ja"
