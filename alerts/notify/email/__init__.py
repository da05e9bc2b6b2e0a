"""SMTP email (smtplib): a plain-text message per notification."""
