"""Recording and replay: transcripts of real runs, and the corpus made from the fakes.

``record`` is the recording format (model, sans-IO writer, strict reader), ``replay``
re-feeds a recording through the parser or session a live run uses, ``replay_budget`` and
``replay_cancel`` judge a recorded run's prompt budget and cancellation, and ``corpus``
makes and lists ``recordings/``. Import from the submodule; this package re-exports nothing.
"""
