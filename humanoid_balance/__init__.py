"""humanoid_balance: balance control for humanoids with serial-parallel hybrid legs."""
__version__ = "0.1.0"
