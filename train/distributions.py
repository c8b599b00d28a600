"""og.distributions: TF1's tf.distributions (graph mode) as a namespace module.

The classes live in distributions_base / distributions_scalar / distributions_vector; this
module gathers them under TF's names.
"""

from __future__ import annotations

from .distributions_base import (
    FULLY_REPARAMETERIZED, NOT_REPARAMETERIZED, Distribution, RegisterKL,
    ReparameterizationType, kl_divergence)
from .distributions_scalar import (
    Bernoulli, Beta, Exponential, Gamma, Laplace, Normal, StudentT, Uniform)
from .distributions_vector import (
    Categorical, Dirichlet, DirichletMultinomial, Multinomial)
from .module_namespace import namespace

_ENTRIES = {
    "Bernoulli": Bernoulli, "Beta": Beta, "Categorical": Categorical,
    "Dirichlet": Dirichlet, "DirichletMultinomial": DirichletMultinomial,
    "Distribution": Distribution, "Exponential": Exponential,
    "FULLY_REPARAMETERIZED": FULLY_REPARAMETERIZED, "Gamma": Gamma, "Laplace": Laplace,
    "Multinomial": Multinomial, "NOT_REPARAMETERIZED": NOT_REPARAMETERIZED,
    "Normal": Normal, "RegisterKL": RegisterKL,
    "ReparameterizationType": ReparameterizationType, "StudentT": StudentT,
    "Uniform": Uniform, "kl_divergence": kl_divergence,
}

__all__ = sorted(_ENTRIES) + ["distributions"]

distributions = namespace("distributions", "TF1's tf.distributions (graph mode).", _ENTRIES)
