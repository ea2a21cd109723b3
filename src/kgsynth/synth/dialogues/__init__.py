"""A scenario -> an item: the template verbaliser (``dialogue``) with its phrase banks
(``phrases``, ``statements``), the haystack a dialogue is padded with to a length
(``haystack``), the LLM verbaliser that rewords a template item (``llm_dialogue``), and the
item, a dialogue with its question, format instruction and gold in one language (``item``)."""
