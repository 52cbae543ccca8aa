"""kgym's Python runners: the trusted reference worker and the untrusted candidate executor.

They execute Python (KernelBench reference modules and ``ModelNew`` candidates) and return
measurements in the schema of ``include/kgym/measurement.hpp``; the C++ judge decides. Both are
forked from a zygote that imported torch once (see ``zygote.py``). Wire format: ``protocol.py``.
"""
