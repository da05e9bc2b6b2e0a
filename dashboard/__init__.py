"""Streamlit pages and Plotly figures; reads only through the query API."""
