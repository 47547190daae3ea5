"""The Streamlit side: everything that imports streamlit, altair or pandas.

Pages call it; it calls `attention` for every number. Nothing here does the maths.
"""
