"""Tensors to tables and Altair charts, the stage block, layout and presenter mode."""
