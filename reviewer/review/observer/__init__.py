"""The negative-claims observer's rules, one small pure function each, so the replay can count what the
framework's prose observer would count. Written from the `.negativeClaims()` documentation (seed 000);
the framework source stored here (9.62.0) predates the observer, so names, codes and limits follow the
documentation. The English grammar itself is not modelled: only the literal phrase extension is.
"""
