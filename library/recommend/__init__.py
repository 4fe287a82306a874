"""Papers picked for a reader, by arxiv-sanity-lite's method through scikit-learn.

- ``text``: one tf-idf vectorizer over title, abstract and authors, fitted by the worker when a
  new day is in and stored (``TextModel``); papers are turned into vectors with it on demand.
- ``pool``: the papers a refit scores (new in the last days) and learns against (those and a
  background sample), as one matrix shared by every reader of a run.
- ``readers``: each reader's linear SVMs (one per tag, or the whole library), fitted in the
  worker when their library or the pool changed; the top scores are stored
  (``Recommendation``) with the words that made them, and a request only reads them.
- ``similar``: a paper's nearest papers by cosine over the same vectors, found once per paper.
"""
