"""kgym's Python runners: the trusted reference worker and the untrusted candidate executor.

They execute Python (KernelBench reference modules and ``ModelNew`` candidates) and return
measurements in the schema of ``include/kgym/measurement.hpp``; the C++ judge decides. Both are
forked from a zygote that imported torch once (see ``zygote.py``), which applies the candidate's
sandbox (``sandbox.py``). The comparison both sides use is ``comparison.py`` (the candidate's
side never imports ``reference.py``). Candidate formats: ``formats/``. Wire format: ``protocol.py``.
"""
