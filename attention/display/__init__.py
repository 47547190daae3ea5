"""Presentation only: tensors to labelled tables and Altair charts, and the shared widgets.

The one place that imports pandas, altair and streamlit; the maths in `attention` never
imports from here."""
